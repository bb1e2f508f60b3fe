"""Policies of /storage_domains."""

from iothrottle.api.policies import base

PREFIX = 'iothrottle:storage_domains:%s'
LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
RESET_PEAK = PREFIX % 'reset_peak'

rules = [
    base.rule(LIST, base.OPERATOR_READER,
              'List storage domains with their capacity.', 'GET',
              '/storage_domains'),
    base.rule(SHOW, base.OPERATOR_READER,
              'Show a storage domain: capacity, learned peak, the disks '
              'the controller acted on and the caps in force.', 'GET',
              '/storage_domains/{key}'),
    base.rule(UPDATE, base.ADMIN,
              "Declare a storage domain's capacity.", 'PUT',
              '/storage_domains/{key}'),
    base.rule(RESET_PEAK, base.ADMIN,
              "Forget a storage domain's learned peak.", 'DELETE',
              '/storage_domains/{key}/learned_peak'),
]


def list_rules():
    return rules
