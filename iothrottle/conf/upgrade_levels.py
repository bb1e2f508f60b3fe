"""[upgrade_levels]: RPC versions pinned during a rolling upgrade.

As Nova's group of the same name: the conductor sends the compute
agents nothing newer than ``compute``, so that agents of the previous
release keep working until every host is upgraded.
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'upgrade_levels',
    title='RPC versions during a rolling upgrade',
    help='Newest RPC versions the conductor may send while services of '
         'an older release still run.')

OPTS = [
    cfg.StrOpt('compute',
               choices=[('1.0', 'agents of the release before memory '
                                'floors: caps only; their balloon floors '
                                'come from their tiers file'),
                        ('1.1', 'memory floors cast with the decisions')],
               help='Newest compute agent RPC version the conductor '
                    'sends (default: unset, the newest it knows, 1.1). '
                    'Set 1.0 while agents of the previous release run, '
                    'then unset it and restart the conductor once every '
                    'agent is upgraded (doc/deploy.rst, "Upgrade"). A '
                    'message an agent is too old for is refused by it, '
                    'logged there, and costs it nothing else.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
