"""[agent] and [conductor]: the compute agent and conductor over RPC.

The message bus itself is oslo.messaging's ``[DEFAULT] transport_url``
(e.g. ``rabbit://guest:guest@127.0.0.1:5672/``).
"""

import socket

from oslo_config import cfg

from iothrottle.conf import groups

AGENT_GROUP = cfg.OptGroup(
    'agent',
    title='Compute agent in conductor mode',
    help='How "iothrottle-compute" (without --standalone) or the '
         'nova-compute monitor talks to the conductor.')

AGENT_OPTS = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this compute host; the conductor casts its '
                    'decisions to the topic "iothrottle-compute.<host>". '
                    'Inside nova-compute, Nova\'s own [DEFAULT] host is '
                    'used.'),
    cfg.ListOpt('owned_domains',
                default=[],
                help='Only the libvirt domains whose name, Nova instance '
                     'name or uuid starts with one of these prefixes are '
                     'reported and capped by this agent; empty means '
                     'every domain of the hypervisor. For two agents on '
                     'one hypervisor (tests), or to leave some alone.'),
    cfg.FloatOpt('max_lease_s',
                 default=120.0, min=1.0, max=3600.0,
                 help='Longest lease the agent grants a cap, whatever the '
                      'decision (conductor or local policy) asks: a longer '
                      'lease is shortened to this, a NaN, infinite or '
                      'non-positive one refused, and one shorter than '
                      '[controller] interval_s lengthened to it. It bounds '
                      'how long a VM stays throttled after its controller '
                      'is lost. Seconds; must exceed [controller] lease_s '
                      'and the paper policy\'s paper_cap_time_s.'),
    cfg.FloatOpt('max_message_age_s',
                 default=10.0, min=1.0, max=3600.0,
                 help='A decision the conductor issued longer ago than this '
                      '(queued while the agent or the bus was down) is '
                      'dropped, not applied as fresh. Compared with the '
                      'conductor\'s wall clock: hosts must keep time '
                      '(NTP). Seconds.'),
    cfg.BoolOpt('report_fanout',
                default=False,
                help='Cast each report to every conductor (a fanout cast '
                     'on topic "iothrottle-conductor") rather than to one '
                     'of them. Required when several conductors share the '
                     'storage domains ([coordination] backend_url): each '
                     'keeps the samples of the domains it owns. With a '
                     'single conductor either works.'),
]

CONDUCTOR_GROUP = cfg.OptGroup(
    'conductor',
    title='Conductor',
    help='The service that decides caps for the storage domains of all '
         'compute hosts.')

CONDUCTOR_OPTS = [
    cfg.StrOpt('guarantees',
               default='nova',
               choices=[('nova', 'each instance\'s host and flavor extra '
                                 'specs as Nova records them, tiers from '
                                 'the database'),
                        ('db', 'the database only: cached flavors, and a '
                               'flavor named like a tier gets that tier; '
                               'trusts every compute host'),
                        ('file', 'the tiers file [conductor] tiers_file; '
                                 'trusts every compute host')],
               help='Where instances\' guarantees come from. Only nova '
                    'checks that a disk comes from the host running its '
                    'instance; db and file are for testbeds and '
                    'standalone use (see doc/security.rst).'),
    cfg.StrOpt('tiers_file',
               default='/etc/iothrottle/tiers.yaml',
               help='Guarantees file used when guarantees = file (the '
                    'format of the standalone agent\'s tiers file).'),
    cfg.FloatOpt('flavor_refresh_s',
                 default=300.0, min=1.0,
                 help='With guarantees = db or file, a flavor\'s guarantee '
                      'is read again once its cached value is this old '
                      '(nova: [nova] instance_refresh_s). Seconds.'),
    cfg.MultiStrOpt('domain_alias',
                    default=[],
                    help='"<reported key>=<storage domain>": disks whose '
                         'agents report this storage domain key are '
                         'controlled as part of the named domain. Map '
                         'several keys to one name to merge domains that '
                         'share a capacity; map one key to rename it. '
                         'Repeat the option for each key.'),
    cfg.BoolOpt('learn_capacity',
                default=True,
                help='A storage domain without a declared capacity '
                     '([storage] domain_capacity, or the database) gets '
                     'the [storage] default scaled until the peak '
                     'throughput observed on it (one interval\'s total, '
                     'persisted) fills it; until one is seen, the '
                     '[storage] default.'),
    cfg.FloatOpt('report_wait_fraction',
                 default=0.5, min=0.0, max=1.0,
                 help='Once the first host has reported for an interval, '
                      'wait at most this fraction of interval_s for the '
                      'other hosts before deciding. Unitless.'),
    cfg.FloatOpt('host_timeout_intervals',
                 default=3.0, min=1.0,
                 help='A host that has not reported for this many '
                      'intervals is no longer waited for. Intervals.'),
    cfg.FloatOpt('max_message_age_s',
                 default=10.0, min=1.0, max=3600.0,
                 help='A report an agent sent longer ago than this (queued '
                      'while the conductor or the bus was down) is dropped, '
                      'not decided on as fresh. Compared with the agent\'s '
                      'wall clock: hosts must keep time (NTP). Seconds.'),
    cfg.FloatOpt('capacity_refresh_s',
                 default=60.0, min=1.0, max=86400.0,
                 help='Declared capacities and learned peaks are read '
                      'again from the database this often, so that '
                      '"iothrottle-manage domain reset-capacity" takes '
                      'effect in a running conductor. Seconds.'),
]


def register_opts(conf):
    groups.register(conf, AGENT_GROUP, AGENT_OPTS)
    groups.register(conf, CONDUCTOR_GROUP, CONDUCTOR_OPTS)


def list_opts():
    return [(AGENT_GROUP, AGENT_OPTS), (CONDUCTOR_GROUP, CONDUCTOR_OPTS)]
