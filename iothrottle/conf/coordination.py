"""[coordination]: several conductors sharing the storage domains (tooz).

Without ``backend_url`` one conductor decides every storage domain, as
before.  With it every conductor joins one tooz group and decides only
the domains a consistent hash ring of the group's members gives it (see
``doc/conductor.rst``, "Several conductors").
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'coordination',
    title='Several conductors',
    help='Group membership and the partition of storage domains among '
         'several iothrottle-conductor processes, through tooz.')

OPTS = [
    cfg.StrOpt('backend_url',
               secret=True,
               help='tooz coordination backend shared by every conductor, '
                    'e.g. "redis://127.0.0.1:6379?membership_timeout=3". '
                    'A member silent for the backend\'s membership timeout '
                    '(tooz\'s Redis driver: membership_timeout, default '
                    '30 s) is dropped and its domains move to the others, '
                    'so keep it to a few intervals. Unset (the default): '
                    'a single conductor decides every domain. Agents must '
                    'then report with [agent] report_fanout = true.'),
    cfg.StrOpt('group',
               default='iothrottle-conductor',
               help='Name of the tooz group the conductors join; '
                    'conductors of one region share it.'),
    cfg.FloatOpt('refresh_s',
                 default=1.0, min=0.1, max=60.0,
                 help='How often a conductor reads the group\'s members '
                      'to update which domains it owns. Seconds; a fraction '
                      'of [controller] interval_s.'),
    cfg.FloatOpt('stale_after_s',
                 default=5.0, min=0.5, max=3600.0,
                 help='A conductor that has not read the group\'s members '
                      'for this long (the backend unreachable) stops '
                      'deciding any domain until it reads them again: it '
                      'may have been replaced. Seconds; at least the '
                      'backend\'s membership timeout.'),
    cfg.IntOpt('partitions',
               default=32, min=1, max=4096,
               help='Partitions of each member on the consistent hash ring '
                    '(tooz.hashring): more spread the domains more evenly '
                    'at the cost of a longer ring. Every conductor must '
                    'use the same number. Count.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
