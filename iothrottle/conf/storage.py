"""[storage]: what each storage domain can deliver.

A storage domain is the set of disks that share one physical capacity.
Its capacity is a linear cost model (see ``iothrottle.controller.cost``):
``max_iops`` small requests per second, or ``max_bytes_sec`` bytes per
second of large ones.
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'storage',
    title='Storage domain capacity',
    help='Capacity of the storage domains the controller rations.')

OPTS = [
    cfg.FloatOpt('default_max_iops',
                 default=200.0, min=1.0,
                 help='Requests per second a storage domain completes when '
                      'every request is small (the cost of one request '
                      'independent of its size). Used for every domain not '
                      'named in domain_capacity. IOPS; the default is one '
                      '7200 rpm disk.'),
    cfg.FloatOpt('default_max_bytes_sec',
                 default=150e6, min=1.0,
                 help='Bytes per second a storage domain moves when every '
                      'request is large. Used for every domain not named in '
                      'domain_capacity. Bytes/s; the default is one 7200 '
                      'rpm disk\'s sequential rate.'),
    cfg.DictOpt('domain_capacity',
                default={},
                help='Per-domain capacity as "domain_key:max_iops/'
                     'max_bytes_sec" pairs, e.g. "nbd+unix:///run/'
                     'store.sock:100/1e9". The domain key is what '
                     '"iothrottle-compute --list-disks" prints.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
