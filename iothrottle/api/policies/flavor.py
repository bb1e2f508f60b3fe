"""Policies of /flavors."""

from iothrottle.api.policies import base

GUARANTEE = 'iothrottle:flavors:guarantee'

rules = [
    base.rule(GUARANTEE, base.OPERATOR_READER,
              "Show the guarantee a Nova flavor's extra specs resolve to "
              '(read from Nova with the service\'s own credentials, so '
              'private flavors too).', 'GET', '/flavors/{flavor}/guarantee'),
]


def list_rules():
    return rules
