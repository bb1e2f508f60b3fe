"""[upgrade_levels]: RPC versions pinned during a rolling upgrade.

As Nova's group of the same name: the conductor (and the operator API,
for host advice) sends the compute agents nothing newer than
``compute``, so that agents of the previous release keep working until
every host is upgraded.
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
                        ('1.1', 'memory floors cast with the decisions'),
                        ('1.2', 'host advice: the operator API calls an '
                                'agent for its findings'),
                        ('1.3', 'watches: the agents check their disks '
                                'within the interval for one that '
                                'stopped ([controller] idle_check_s)')],
               help='Newest compute agent RPC version the conductor and '
                    'the operator API send (default: unset, the newest '
                    'they know, 1.3). Set the version of the oldest agent '
                    'still running (1.0 to 1.2) while agents of a '
                    'previous release run, then unset it and restart the '
                    'conductor and the API once every agent is upgraded '
                    '(doc/deploy.rst, "Upgrade"). A '
                    'message an agent is too old for is refused by it, '
                    'logged there, and costs it nothing else.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
