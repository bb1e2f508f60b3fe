"""Policies of /decisions."""

from iothrottle.api.policies import base

LIST = 'iothrottle:decisions:list'

rules = [
    base.rule(LIST, base.OPERATOR_READER,
              "List the controller's recent decisions, by storage domain, "
              'instance or time.', 'GET', '/decisions'),
]


def list_rules():
    return rules
