"""Policies of /hosts."""

from iothrottle.api.policies import base

ADVICE = 'iothrottle:hosts:advice'

rules = [
    base.rule(ADVICE, base.ADMIN,
              "Ask a compute host's agent for advice on its block devices "
              "and its guests' disk configuration (it names every guest "
              'of the host and how its disks are set up).', 'GET',
              '/hosts/{host}/advice'),
]


def list_rules():
    return rules
