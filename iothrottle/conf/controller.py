"""[controller]: the policy that turns samples into caps.

Every tunable of ``iothrottle.controller.guarantee`` and
``iothrottle.controller.paper`` is here; the module essays explain them.
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'controller',
    title='Guarantee controller',
    help='Which policy decides caps, and its tunables.')

OPTS = [
    cfg.StrOpt('policy',
               default='guarantee',
               help='Controller policy, an entry point of the '
                    '"iothrottle.policies" namespace: "guarantee" (keeps '
                    'every instance at or above its minimum guarantee), '
                    '"paper" (Algorithm 1 of seed 000, the reference), '
                    '"static" (fixed caps as Nova\'s quota:disk_* would '
                    'set them, the scenario bench\'s peer) or "none" '
                    '(observe only).'),
    cfg.FloatOpt('interval_s',
                 default=5.0, min=0.5,
                 help='Seconds between two controller decisions; the '
                      'samples cover this interval. Seed 000 used 5 s. '
                      'Every cap the controller changes lets 0.1 s of '
                      'itself through at once (QEMU empties its throttle '
                      'buckets on a change), 2 % of a 5 s interval and 5 '
                      '% of a 2 s one: the shorter the interval, the more '
                      'of a cut that burst takes back.'),
    cfg.FloatOpt('idle_check_s',
                 default=0.25, min=0.0, max=60.0,
                 help='Seconds between two checks within an interval '
                      'for a disk that stopped: the agent samples its '
                      'disks this often between decisions while the '
                      'last one left caps a check could grow, and hands '
                      'the load of a disk that stopped to the caps held '
                      'at theirs, so that the domain keeps the load the '
                      'last decision settled on instead of idling until '
                      'the next one ("guarantee" policy). A disk counts '
                      'as stopped after a span without a completion in '
                      'which its last rate promised 8 requests. In '
                      'conductor mode the conductor casts each host '
                      'what its checks read (compute RPC 1.3), and a '
                      'stop hands its load to the caps of its own host. '
                      '0 turns the checks off; must be less than '
                      'interval_s.'),
    cfg.FloatOpt('border_fraction',
                 default=0.9, min=0.1, max=1.0,
                 help='A storage domain counts as saturated when its load '
                      'reaches this fraction of its capacity (seed 000 and '
                      'VMware SIOC use 0.9). Unitless.'),
    cfg.FloatOpt('latency_factor',
                 default=3.0, min=1.0,
                 help='A storage domain also counts as saturated when its '
                      'mean latency exceeds this multiple of the lowest '
                      'latency it has shown (its baseline). Unitless.'),
    cfg.FloatOpt('congestion_latency_ms',
                 default=30.0, min=0.01, max=60000.0,
                 help='Until a storage domain has shown its baseline '
                      'latency in a quiet interval, it counts as congested '
                      'when the mean latency of its uncapped disks reaches '
                      'this: VMware SIOC\'s default congestion threshold '
                      '(raise it for a store whose unqueued latency comes '
                      'near it). Such a reading holds the domain saturated '
                      'and, while busy, teaches the "guarantee" policy the '
                      'domain\'s capacity from what it completes; it '
                      'lowers that capacity only when the latency also '
                      'reached latency_factor times the lowest the domain '
                      'showed before. Milliseconds.'),
    cfg.FloatOpt('want_inflight',
                 default=0.5, min=0.0,
                 help='An instance "wants more" when its mean number of '
                      'requests in flight (IOPS x mean latency, Little\'s '
                      'law) is at least this. A paced, satisfied stream '
                      'stays below it; a starved one sits near 1 per '
                      'stream. Requests.'),
    cfg.FloatOpt('defend_fraction',
                 default=0.05, min=0.0, max=1.0,
                 help='Margin over a guarantee below which an instance '
                      'that wants more is defended: on a saturated '
                      'domain, caps are tightened once it gets less than '
                      '(1 + defend_fraction) x its guarantee, so that '
                      'measurement noise of one interval does not break '
                      'the guarantee. Must not exceed guard_fraction. '
                      'Unitless.'),
    cfg.FloatOpt('guard_fraction',
                 default=0.2, min=0.0, max=1.0,
                 help='Headroom kept above a guarantee: an instance that '
                      'wants more and is below (1 + guard_fraction) x its '
                      'guarantee blocks any cap release, so releases stop '
                      'before a guarantee breaks; below the saturation '
                      'border a release grows caps only as far as the '
                      'domain\'s latency leaves each guaranteed instance '
                      'this headroom. Unitless.'),
    cfg.FloatOpt('release_fraction',
                 default=0.1, min=0.01, max=1.0,
                 help='Gradual release: when no guarantee is at risk, a '
                      'cap grows by this fraction of itself per interval. '
                      'Unitless.'),
    cfg.IntOpt('calm_intervals',
               default=3, min=1,
               help='Releases wait until no guarantee has been at risk for '
                    'this many intervals in a row, so one lucky interval '
                    'does not start a release that the next one undoes. '
                    'Below the domain\'s border the wait ends sooner, '
                    'once every cut has acted and no uncapped guaranteed '
                    'disk wants more. Intervals.'),
    cfg.FloatOpt('lease_s',
                 default=30.0, min=1.0,
                 help='Lifetime of a cap set by the "guarantee" policy. '
                      'The policy renews caps it still needs every '
                      'interval; the compute agent lifts an expired cap by '
                      'itself. Seconds; must exceed interval_s.'),
    cfg.FloatOpt('min_cap_iops',
                 default=10.0, min=1.0, max=1e15,
                 help='The least a cap allows on its IOPS axis, for every '
                      'policy: a disk the controller holds as hard as it '
                      'may (a donor without a floor, the top consumer of '
                      '"paper") gets this, never 0, which libvirt reads as '
                      'unlimited. 10 drains QEMU\'s default virtio-blk '
                      'queue of 256 requests in 25.6 s, under the 30 s '
                      'command timeout of Linux guests. Requests per '
                      'second.'),
    cfg.FloatOpt('min_cap_bytes_sec',
                 default=1048576.0, min=4096.0, max=1e15,
                 help='The least a cap allows on its bandwidth axis, for '
                      'every policy (see min_cap_iops); 1 MiB/s is '
                      'min_cap_iops requests of 100 KiB. Bytes per '
                      'second.'),
    cfg.FloatOpt('paper_rate',
                 default=0.5, min=0.01, max=0.99,
                 help='"paper" policy: the cap is rate x the top '
                      'consumer\'s last throughput (seed 000 gives no '
                      'number). Unitless.'),
    cfg.FloatOpt('paper_cap_time_s',
                 default=60.0, min=1.0,
                 help='"paper" policy: lifetime of a cap (seed 000: '
                      '60 s). Seconds; must exceed interval_s.'),
]


def check(conf):
    """The first inconsistency between the group's options as one line,
    or None: a lease that does not outlive the interval lapses before
    its renewal and makes the cap flap (issue 9); a check within an
    interval as long as the interval is none."""
    c = conf.controller
    for name in ('lease_s', 'paper_cap_time_s'):
        if getattr(c, name) <= c.interval_s:
            return ('[controller] %s (%g s) must exceed interval_s (%g s)'
                    % (name, getattr(c, name), c.interval_s))
    if c.idle_check_s >= c.interval_s:
        return ('[controller] idle_check_s (%g s) must be less than '
                'interval_s (%g s); 0 turns the checks off'
                % (c.idle_check_s, c.interval_s))
    return None


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
