"""Seed 001 on the block-layer testbed: the host scheduler decides how
consolidated guests share one disk.

Seed 001 ran 5 VMs with FFSB on one host disk under each Linux I/O
scheduler of 2009 and found, for the host: CFQ > AS > Deadline > NOOP
(Xen and VMware Server alike); host traces showed the loss is switching
between VM images (long head moves), NOOP switching most; enlarging CFQ's
time slice and idle delay ("CFQ8") gained about +20 % (Xen) and +30 %
(VMware Server).  Seed 003 turned the same effect into a number, the
continuous access ratio alpha, that the host scheduler sets.

The testbed version: ``Plan.guests`` tiny guests, each one synchronous
4 KiB random reader (``loadgen -p 1 -m randread``) inside its own 2 GiB
disk, the disks spread evenly over the seek disk (the nbdkit plugin
``seekdisk_plugin.py``: a 160 GiB read-only disk whose service time is a
Ruemmler-Wilkes seek curve, its own anticipation off) reached through
the block layer (nbdkit -> nbdfuse -> loop, ``cache='none'
io='native'``), so the host's scheduler on the loop device orders the
guests' requests.  Per scheduler *setting* (below) the bench measures

* the guests' total and per-guest throughput (libvirt's block
  statistics over ``window_s`` after ``warmup_s``), and
* ``iothrottle-calibrate`` run on the loop device itself (host readers:
  ``f(l)``, then N = 1, 2, 4, 8 streams), whose fitted alpha is what the
  shipped profiles' ``alpha_by_scheduler`` holds;

and from the guests' total the alpha equation (1) needs to explain it
(inverting the same calibration's ``f``): the effective alpha the
guests got.

What maps to what (2009 -> today's blk-mq, Linux 5.0 removed the legacy
schedulers):

========  =====================================================
seed 001  here
========  =====================================================
NOOP      ``none``: dispatch in arrival order, no reordering
Deadline  ``mq-deadline``: sorted batches with expiry times
AS        no successor: its anticipation (idle for the process
          just served) lives on in BFQ's ``slice_idle``
CFQ       ``bfq``: per-process queues served in turn, idling
          ``slice_idle`` (8 ms) for a synchronous queue; BFQ
          replaced CFQ (Linux 5.0) and keeps its idea
CFQ8      ``bfq-long``: BFQ with ``slice_idle`` and the
          synchronous budget timeout four times the defaults
          (the paper does not print its values)
(none)    ``kyber``: latency-target token scheduler, no 2009
          counterpart
========  =====================================================

This module holds the plan and the scoring (pure);
``iothrottle.bench.seed001_runner`` drives the testbed.
"""

import dataclasses

from iothrottle.seekmodel import model

MIB = 1 << 20
GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class Setting:
    """One host scheduler configuration under test."""
    label: str
    scheduler: str
    # (tunable under queue/iosched/, value) pairs written after the
    # scheduler is selected (selecting it resets them to its defaults).
    tunables: tuple = ()
    paper: str = None      # the seed-001 scheduler it stands for
    note: str = ''


SETTINGS = (
    Setting('none', 'none', paper='NOOP',
            note='arrival order, no reordering'),
    Setting('mq-deadline', 'mq-deadline', paper='Deadline',
            note='sorted batches, expiry times'),
    Setting('kyber', 'kyber', paper=None,
            note='latency targets; no 2009 counterpart'),
    Setting('bfq', 'bfq', paper='CFQ',
            note="CFQ's successor: per-process queues, idles "
                 'slice_idle 8 ms'),
    # 4x BFQ's defaults (slice_idle 8 ms, timeout_sync 125 ms): a longer
    # turn per guest, as CFQ8 gave CFQ.
    Setting('bfq-long', 'bfq',
            tunables=(('slice_idle_us', 32000), ('timeout_sync', 500)),
            paper='CFQ8', note='bfq, slice_idle 32 ms, timeout_sync '
                               '500 ms'),
)
BY_LABEL = {s.label: s for s in SETTINGS}

# What seed 001 printed (its figures give only the ranking in the text).
PAPER_HOST_RANKING = ('CFQ', 'AS', 'Deadline', 'NOOP')
PAPER_CFQ8_GAIN = {'Xen': 0.20, 'VMware Server': 0.30}
PAPER_VMS = 5


@dataclasses.dataclass(frozen=True)
class Plan:
    guests: int = PAPER_VMS
    disk_mb: int = 2048           # seed 003's 2 GB files
    span_gib: int = 160           # the whole seek disk
    block_kb: int = 4
    procs: int = 1                # synchronous readers per guest
    warmup_s: float = 5.0
    window_s: float = 20.0
    time_scale: float = 1.0       # seek disk delays (1: a 7200 rpm disk)
    cal_seconds_per_point: float = 2.0
    cal_distances: str = '256M,1G,4G,16G,64G,159G'
    cal_streams: str = '1,2,4,8'
    settings: tuple = tuple(s.label for s in SETTINGS)
    memory_mb: int = 128

    def offsets_mb(self):
        """Where each guest's disk starts: first at 0, last at the end of
        the span, evenly between (as ``probe.file_layout`` lays files)."""
        room = self.span_gib * 1024 - self.disk_mb
        if self.guests == 1:
            return [0]
        return [room * k // (self.guests - 1) for k in range(self.guests)]

    def streams(self):
        return [model.Stream(size_bytes=self.disk_mb * MIB,
                             offset_bytes=o * MIB, name='vm%d' % (k + 1))
                for k, o in enumerate(self.offsets_mb())]

    def seekdisk_params(self):
        return {'size': '%dG' % self.span_gib,
                'time_scale': '%g' % self.time_scale}


def default_plan(short=False, settings=None):
    if short:
        # The whole seek disk, as the full plan: with the two images
        # 160 GiB apart a switch costs 4 x a request inside one (25 ms
        # against 6; 8 GiB apart, 1.7 x, and bfq's +32-50 % over none
        # left the e2e test's 1.2 x little margin).
        plan = Plan(guests=2, disk_mb=256, warmup_s=2.0,
                    window_s=5.0, cal_seconds_per_point=1.0,
                    cal_distances='256M,4G,64G,159G', cal_streams='1,2')
    else:
        plan = Plan()
    if settings:
        unknown = [s for s in settings if s not in BY_LABEL]
        if unknown:
            raise ValueError('unknown setting %r (known: %s)' % (
                unknown[0], ', '.join(BY_LABEL)))
        plan = dataclasses.replace(plan, settings=tuple(settings))
    return plan


def profile_from_curve(points):
    """An HDD profile of the calibration's ``f`` points (pure)."""
    return model.HddProfile(
        name='seekdisk', request_size_bytes=4096,
        distance_curve=model.DistanceTable(model.non_increasing(points)))


def guests_alpha(plan, curve_points, bytes_sec):
    """The alpha equation (1) needs for the guests' total ``bytes_sec``
    under ``f`` = ``curve_points``: ``(alpha, bound)`` where ``bound`` is
    None, or ``'above'`` (``'below'``) when the guests ran faster (slower)
    than ``f`` allows at alpha 1 (0) and alpha is that end."""
    prof = profile_from_curve(curve_points)
    streams = plan.streams()
    near = prof.distance_curve.bandwidth_bytes_sec(
        model.streams_l_ave(streams, 1.0))
    far = prof.distance_curve.bandwidth_bytes_sec(
        model.streams_l_ave(streams, 0.0))
    if bytes_sec > near:
        return 1.0, 'above'
    if bytes_sec < far:
        return 0.0, 'below'
    return model.alpha_for_bandwidth(prof, streams, bytes_sec), None


def summarize(plan, setting, guest_bytes_sec, guest_iops, calibration):
    """One row: the guests' throughput and both alphas.

    ``guest_bytes_sec`` / ``guest_iops``: {guest: rate} over the window;
    ``calibration``: the ``calibration`` document ``iothrottle-calibrate``
    wrote (its ``distance_points`` and ``alpha``).
    """
    total = sum(guest_bytes_sec.values())
    points = [(p['distance_bytes'], p['bandwidth_bytes_sec'])
              for p in calibration['distance_points']]
    shares = {vm: (b / total if total else 0.0)
              for vm, b in sorted(guest_bytes_sec.items())}
    two = [r for r in calibration.get('validation', ())
           if r['streams'] == 2]
    alpha_guests, bound = guests_alpha(plan, points, total)
    return {
        'label': setting.label, 'scheduler': setting.scheduler,
        'tunables': dict(setting.tunables), 'paper': setting.paper,
        'total_bytes_sec': total,
        'total_iops': sum(guest_iops.values()),
        'guest_bytes_sec': dict(sorted(guest_bytes_sec.items())),
        'guest_shares': shares,
        'min_share': min(shares.values()) if shares else 0.0,
        'alpha_guests': alpha_guests, 'alpha_guests_bound': bound,
        'alpha_calibrate': calibration['alpha']['value'],
        'alpha_calibrate_method': calibration['alpha']['method'],
        'alpha_calibrate_counted': calibration['alpha']['by_service_order'],
        'calibrate_2_streams_bytes_sec': (
            two[0]['measured_bytes_sec'] if two else None),
    }


def shared_io_groups(row):
    """{cgroup: [guest, ...]} of the cgroups that charge the I/O of
    more than one of the row's guests (``row['io_groups']``; empty when
    the row has none).  BFQ idles for the guest it just served because
    each guest is its own cgroup: two guests in one are two queues of
    one group, and BFQ does not idle between seeky queues there (both
    guests under one blkio cgroup: bfq 403 KB/s, none 403)."""
    members = {}
    for vm, group in sorted((row.get('io_groups') or {}).items()):
        members.setdefault(group, []).append(vm)
    return {g: vms for g, vms in members.items() if len(vms) > 1}


def ranking(rows):
    """Labels by guests' total throughput, best first."""
    return [r['label'] for r in sorted(rows, key=lambda r: (
        -r['total_bytes_sec'], r['label']))]


def paper_order_kept(rows):
    """Whether the settings that stand for seed 001's schedulers rank as
    the paper's host schedulers did (CFQ > Deadline > NOOP; AS has no
    successor).  None when fewer than two of them ran."""
    by_paper = {r['paper']: r['total_bytes_sec'] for r in rows
                if r['paper'] in PAPER_HOST_RANKING}
    order = [p for p in PAPER_HOST_RANKING if p in by_paper]
    if len(order) < 2:
        return None
    return all(by_paper[a] > by_paper[b] for a, b in zip(order, order[1:]))


def long_slice_gain(rows):
    """bfq-long's throughput over bfq's, minus 1 (seed 001's CFQ8 gain);
    None unless both ran."""
    by = {r['label']: r['total_bytes_sec'] for r in rows}
    if not by.get('bfq') or 'bfq-long' not in by:
        return None
    return by['bfq-long'] / by['bfq'] - 1.0


def alpha_by_scheduler(rows):
    """{scheduler: alpha calibrate fitted} of the settings that leave the
    scheduler's tunables at their defaults (what a profile can name)."""
    return {r['scheduler']: round(r['alpha_calibrate'], 3) for r in rows
            if not r['tunables']}


def _fmt(value, spec):
    return '-' if value is None else spec % value


def _alpha_cell(row):
    """'0.41', or '>=1' / '<=0' when f cannot explain the guests'
    total (they beat f at alpha 1: the effective-alpha effect of
    doc/seekmodel.rst)."""
    bound = row.get('alpha_guests_bound')
    if bound == 'above':
        return '>=1'
    if bound == 'below':
        return '<=0'
    return _fmt(row['alpha_guests'], '%.2f')


def table(rows, plan):
    """The text table: one row per setting, seed 001's view beside."""
    base = {r['label']: r['total_bytes_sec'] for r in rows}.get('none')
    lines = [
        '%d guests x 1 synchronous %d KiB random reader, %d MiB disks '
        'spread over %d GiB of the seek disk' % (
            plan.guests, plan.block_kb, plan.disk_mb, plan.span_gib),
        '%-12s %-9s %9s %7s %8s %9s %9s %9s %9s' % (
            'setting', 'seed 001', 'KB/s', 'IOPS', 'vs none', 'min share',
            'alpha gst', 'alpha cal', 'counted'),
    ]
    for r in rows:
        lines.append('%-12s %-9s %9.1f %7.1f %8s %9.2f %9s %9s %9s' % (
            r['label'], r['paper'] or '-', r['total_bytes_sec'] / 1e3,
            r['total_iops'],
            _fmt((r['total_bytes_sec'] / base - 1.0) * 100 if base
                 else None, '%+.0f %%'),
            r['min_share'], _alpha_cell(r),
            _fmt(r['alpha_calibrate'], '%.2f'),
            _fmt(r['alpha_calibrate_counted'], '%.2f')))
    for r in rows:
        for group, vms in sorted(shared_io_groups(r).items()):
            lines.append('%s: %s share the I/O cgroup %s (BFQ cannot tell '
                         'them apart)' % (r['label'], ', '.join(vms),
                                          group))
    lines.append('ranking here: %s' % ' > '.join(ranking(rows)))
    kept = paper_order_kept(rows)
    lines.append('seed 001 (host): %s; CFQ8 +%d %% (Xen), +%d %% (VMware '
                 'Server); order of the mapped settings kept: %s' % (
                     ' > '.join(PAPER_HOST_RANKING),
                     PAPER_CFQ8_GAIN['Xen'] * 100,
                     PAPER_CFQ8_GAIN['VMware Server'] * 100,
                     {None: 'n/a', True: 'yes', False: 'no'}[kept]))
    gain = long_slice_gain(rows)
    if gain is not None:
        lines.append('bfq-long over bfq (CFQ8 over CFQ): %+.0f %%'
                     % (gain * 100))
    return '\n'.join(lines)
