"""``iothrottle-calibrate``: measure a device, write its seek-model profile.

``iothrottle-calibrate /dev/sdb -o sdb.json`` measures, with O_DIRECT
reads only, the disk's seek distance to bandwidth curve ``f(l)`` (one
point per ``--distances`` value, ``--seconds-per-point`` each), then runs
N interleaved synchronous random readers (``--streams``, default 1, 2, 4,
8), fits the continuous access ratio alpha from the N = 2 run as seed
003 did, predicts the other N with it and prints predicted against
measured.  The profile (``iothrottle.seekmodel.profile``) holds the
curve, alpha under the device's current I/O scheduler and, under
``calibration``, every raw measurement and the validation table.

``--kind flash`` measures IOPS versus outstanding requests (``--qd``)
for reads and for writes instead; writes need ``--allow-write`` and
overwrite the target's data.  ``--create SIZE`` first writes PATH as a
new regular file of SIZE (random data, not sparse) to probe a
filesystem instead of a raw device.

Progress goes to stderr; the profile to ``--output`` (default stdout).
Exit 0 done, 2 bad input (one line on stderr), 1 an I/O error mid-run.
"""

import argparse
import os
import platform
import sys
import time

from iothrottle.seekmodel import model
from iothrottle.seekmodel import probe
from iothrottle.seekmodel import profile

PROG = 'iothrottle-calibrate'
KINDS = ('auto', model.HDD, model.FLASH)
UNITS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}

# The N = 2 run fits alpha by inverting f (the paper's way) only when
# alpha can move the prediction by this much: on a device whose f is
# nearly flat the inversion amplifies noise, and counting how often
# consecutive completions stay in one stream is the better estimate.
MIN_ALPHA_LEVERAGE = 0.1

# An N = 2 bandwidth this far outside the range f spans between alpha 0
# and 1 cannot be inverted; within it, it is measurement noise.
RANGE_SLACK = 0.02

# Two streams this much faster than f allows at their shortest l_ave
# cannot share one head: the device works on them in parallel.
PARALLEL_EXCESS = 0.2

# f(l) must span at least this much (first point over last) for the
# device to count as seeking at all.
MIN_CURVE_SPREAD = 0.25

# Default per-stream file of the alpha runs: seed 003's 2 GB, less on a
# small target so that 8 files leave room between them.
DEFAULT_FILE_BYTES = 2 << 30


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line."""

    def error(self, message):
        raise UsageError(message)


def parse_size(text):
    """'4096', '64K', '1.5G', '2GiB' (binary units) -> bytes, > 0."""
    t = text.strip().upper()
    for suffix in ('IB', 'B'):
        if t.endswith(suffix) and t[:-len(suffix)][-1:] in 'KMGT':
            t = t[:-len(suffix)]
            break
    unit = t[-1] if t[-1:] and t[-1] in 'KMGT' else ''
    try:
        value = float(t[:-1] if unit else t) * UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError('not a size: %r' % text)
    if not value > 0:
        raise argparse.ArgumentTypeError('must be > 0, got %r' % text)
    return int(value)


def parse_sizes(text):
    return [parse_size(t) for t in text.split(',') if t.strip()]


def parse_counts(text):
    try:
        counts = [int(t) for t in text.split(',') if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError('not a list of integers: %r' % text)
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError('counts must be >= 1: %r' % text)
    return sorted(set(counts))


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('not a number: %r' % text)
    if not value > 0:
        raise argparse.ArgumentTypeError('must be > 0, got %r' % text)
    return value


def parse_args(argv):
    p = _Parser(prog=PROG, description=__doc__.split('\n')[0])
    p.add_argument('path', help='block device, regular file or '
                                'nbd+unix:///?socket=PATH to probe')
    p.add_argument('-o', '--output', default='-',
                   help='profile JSON file (default: stdout)')
    p.add_argument('--kind', choices=KINDS, default='auto',
                   help='hdd (seek model) or flash (QD curves); auto: '
                        'from the device\'s queue/rotational')
    p.add_argument('--name', help='profile name (default: device and path)')
    p.add_argument('--seconds-per-point', type=positive_float, default=2.0,
                   help='run time of each measurement, seconds (2)')
    p.add_argument('--request-size', type=parse_size, default=4096,
                   help='bytes per request, a multiple of 4096 (4096)')
    p.add_argument('--distances', type=parse_sizes,
                   help='seek distances of f(l), e.g. 16M,256M,4G (default: '
                        '8 from 16 MiB to the target size, geometric)')
    p.add_argument('--streams', type=parse_counts, default=[1, 2, 4, 8],
                   help='stream counts N to measure; must include 2, the '
                        'alpha fit (1,2,4,8)')
    p.add_argument('--file-size', type=parse_size,
                   help='size of each stream\'s file (default: 2 GiB, at '
                        'most 1/16 of the target)')
    p.add_argument('--spans', type=parse_sizes,
                   help='repeat the N runs with the files spread over each '
                        'of these leading parts of the target (default: '
                        'all of it); the N = 2 fit uses the largest')
    p.add_argument('--qd', type=parse_counts, default=[1, 2, 4, 8, 16, 32],
                   help='flash: outstanding requests to measure')
    p.add_argument('--scheduler', choices=model.SCHEDULERS,
                   help='I/O scheduler the alpha belongs to (default: read '
                        'from sysfs)')
    p.add_argument('--create', type=parse_size, metavar='SIZE',
                   help='first create PATH as a new file of SIZE')
    p.add_argument('--allow-write', action='store_true',
                   help='allow writes to the target (flash write curve; '
                        'destroys its data)')
    p.add_argument('--seed', type=int, default=1,
                   help='random seed of the offsets')
    args = p.parse_args(argv)
    if args.request_size % 4096:
        p.error('--request-size must be a multiple of 4096')
    return args


class Progress:
    def __init__(self, out, total):
        self.out = out
        self.total = total
        self.done = 0
        self.start = time.monotonic()

    def note(self, text):
        self.out.write('%s: %s\n' % (PROG, text))
        self.out.flush()

    def step(self, text):
        self.done += 1
        self.note('[%d/%d, %.0f s] %s' % (self.done, self.total,
                                          time.monotonic() - self.start,
                                          text))


def _mb(bytes_sec):
    return '%.3f MB/s' % (bytes_sec / 1e6)


def _gib(n):
    return '%.3g GiB' % (n / float(1 << 30))


def default_distances(target):
    """8 distances from 16 MiB to the largest the target holds,
    geometric."""
    top = target.size_bytes - min(target.size_bytes // 5,
                                  probe.MAX_WINDOW_BYTES)
    low = min(16 << 20, top // 8)
    ratio = (top / float(low)) ** (1 / 7.0)
    return sorted({target.align(int(low * ratio ** k)) for k in range(8)})


def detect_kind(target):
    """flash for a non-rotational device, hdd otherwise (or unknown)."""
    return model.FLASH if target.rotational is False else model.HDD


def calibrate_hdd(args, target, scheduler, progress):
    distances = args.distances or default_distances(target)
    raw = []
    for k, distance in enumerate(distances):
        mean, bw, n = probe.measure_distance(
            target, distance, args.seconds_per_point, seed=args.seed + k)
        raw.append({'distance_bytes': distance, 'mean_distance_bytes': mean,
                    'bandwidth_bytes_sec': bw, 'requests': n})
        progress.step('f(l) at l = %s: %s (%d requests)'
                      % (_gib(distance), _mb(bw), n))
    points = model.non_increasing([(r['distance_bytes'],
                                    r['bandwidth_bytes_sec']) for r in raw])
    curve = model.DistanceTable(points)
    try:
        fit = model.fit_inverse_linear(points)
        fit_doc = {'a_sec_per_byte2': fit.a_sec_per_byte2,
                   'b_sec_per_byte': fit.b_sec_per_byte}
    except ValueError as e:
        fit_doc = {'error': str(e)}
    spread = points[0][1] / points[-1][1] - 1.0
    if spread < MIN_CURVE_SPREAD:
        progress.note('f(l) is flat within %.1f %% over %s..%s: this device '
                      'does not seek like a disk; a flash profile (--kind '
                      'flash --allow-write) describes it better'
                      % (100 * spread, _gib(points[0][0]),
                         _gib(points[-1][0])))
    bare = model.HddProfile(name='', distance_curve=curve,
                            request_size_bytes=args.request_size)

    file_bytes = args.file_size or max(
        target.align(min(DEFAULT_FILE_BYTES, target.size_bytes // 16)),
        args.request_size)
    spans = sorted(args.spans or [target.size_bytes], reverse=True)
    runs = {}
    for span in spans:
        for n in args.streams:
            run = probe.measure_streams(target, n, file_bytes,
                                        args.seconds_per_point,
                                        seed=args.seed + 100 + n,
                                        span_bytes=span)
            runs[span, n] = run
            progress.step('N = %d streams over %s: %s, shares %s' % (
                n, _gib(span), _mb(run.bandwidth_bytes_sec),
                ' '.join('%.2f' % s for s in run.shares())))

    pair = runs[spans[0], 2]
    streams = _streams(pair)
    farthest = model.streams_l_ave(streams, 0.0)
    if farthest > points[-1][0] * 1.05:
        progress.note('the files lie up to %s apart but f(l) stops at %s; '
                      'beyond it f is held flat: add longer --distances'
                      % (_gib(farthest), _gib(points[-1][0])))
    alpha_seq = model.alpha_from_sequence(pair.stream_ids())
    alpha_bw = model.alpha_for_bandwidth(bare, streams,
                                         pair.bandwidth_bytes_sec)
    near = curve.bandwidth_bytes_sec(model.streams_l_ave(streams, 1.0))
    far = curve.bandwidth_bytes_sec(model.streams_l_ave(streams, 0.0))
    leverage = (near - far) / near
    measured = pair.bandwidth_bytes_sec
    in_range = far * (1 - RANGE_SLACK) <= measured <= near * (1 + RANGE_SLACK)
    if alpha_bw is not None and leverage >= MIN_ALPHA_LEVERAGE and in_range:
        alpha, method = alpha_bw, 'l_ave inversion of the N = 2 bandwidth'
    else:
        alpha = alpha_seq if alpha_seq is not None else model.DEFAULT_ALPHA
        if not in_range:
            why = ('the N = 2 bandwidth, %s, is outside %s..%s, all that f '
                   'gives between alpha 0 and 1' % (_mb(measured), _mb(far),
                                                    _mb(near)))
        else:
            why = 'f moves only %.1f %% between alpha 0 and 1' % (
                100 * leverage)
        method = 'service order of the N = 2 run (%s)' % why
    if measured > near * (1 + PARALLEL_EXCESS):
        progress.note('two streams together do %.2f x what f allows one '
                      'disk head: this device serves streams in parallel '
                      'and the seek model does not apply to it; a flash '
                      'profile (--kind flash --allow-write) describes it '
                      'better' % (measured / near))
    progress.note('alpha under %s = %.3f (%s); by service order %s, by '
                  'inversion %s' % (scheduler, alpha, method,
                                    _fmt(alpha_seq), _fmt(alpha_bw)))
    prof = model.HddProfile(name=args.name or _name(target),
                            distance_curve=curve,
                            alpha_by_scheduler={scheduler: alpha},
                            request_size_bytes=args.request_size)
    rows = []
    for (span, n), run in sorted(runs.items()):
        pred = model.predict(prof, _streams(run), scheduler)
        rows.append({
            'streams': n, 'span_bytes': span,
            'l_ave_bytes': pred.l_ave_bytes,
            'predicted_bytes_sec': pred.bandwidth_bytes_sec,
            'measured_bytes_sec': run.bandwidth_bytes_sec,
            'error_fraction': (pred.bandwidth_bytes_sec
                               / run.bandwidth_bytes_sec - 1.0),
            'l_served_bytes': run.mean_distance_bytes(),
            'alpha_counted': model.alpha_from_sequence(run.stream_ids()),
            'measured_shares': run.shares(),
            'requests': run.requests,
            'fit_point': (span, n) == (spans[0], 2)})
    calibration = {
        'distance_points': raw, 'inverse_linear_fit': fit_doc,
        'alpha': {'scheduler': scheduler, 'value': alpha, 'method': method,
                  'by_service_order': alpha_seq, 'by_inversion': alpha_bw,
                  'leverage': leverage},
        'stream_file_bytes': file_bytes, 'validation': rows}
    return prof, calibration, validation_table(rows)


def _fmt(value):
    return 'n/a' if value is None else '%.3f' % value


def _streams(run):
    return [model.Stream(size_bytes=run.file_bytes, offset_bytes=o)
            for o in run.offsets]


def _name(target):
    return '%s (%s)' % (target.device, target.path)


def validation_table(rows):
    lines = ['%3s %9s %10s %10s %12s %12s %7s %7s' % (
        'N', 'span GiB', 'l_ave GiB', 'seen GiB', 'pred MB/s', 'meas MB/s',
        'error', 'alpha')]
    for r in rows:
        seen = r.get('l_served_bytes')
        lines.append('%3d %9.3g %10.3f %10s %12.4f %12.4f %+6.1f%% %7s%s' % (
            r['streams'], r['span_bytes'] / float(1 << 30),
            r['l_ave_bytes'] / float(1 << 30),
            'n/a' if seen is None else '%.3f' % (seen / float(1 << 30)),
            r['predicted_bytes_sec'] / 1e6, r['measured_bytes_sec'] / 1e6,
            100 * r['error_fraction'], _fmt(r['alpha_counted']),
            '  (fit)' if r['fit_point'] else ''))
    return '\n'.join(lines)


def _qd_curve(name, measured):
    """A non-decreasing curve from measured (q, iops) points."""
    flipped = model.non_increasing([(q, -iops) for q, iops in measured])
    return model.QdCurve([(q, -v) for q, v in flipped], name=name)


def calibrate_flash(args, target, progress):
    curves = {}
    for direction, write in (('read', False), ('write', True)):
        measured = []
        for q in args.qd:
            iops = probe.measure_qd(target, q, args.seconds_per_point,
                                    write=write, seed=args.seed + q)
            measured.append((q, iops))
            progress.step('%s at %d outstanding: %.0f IOPS'
                          % (direction, q, iops))
        curves[direction] = measured
    prof = model.FlashProfile(
        name=args.name or _name(target),
        read_qd_curve=_qd_curve('read_qd_curve', curves['read']),
        write_qd_curve=_qd_curve('write_qd_curve', curves['write']),
        request_size_bytes=args.request_size)
    calibration = {'measured_read_iops': curves['read'],
                   'measured_write_iops': curves['write'],
                   'note': 'one Python process issues the requests; an '
                           'NVMe device may do more than it can ask for'}
    table = '\n'.join('%4d %12.0f %12.0f' % (q, r, w) for (q, r), (_q, w)
                      in zip(curves['read'], curves['write']))
    return prof, calibration, '  QD    read IOPS   write IOPS\n' + table


def run(args, argv, err):
    if args.create:
        if os.path.exists(args.path):
            raise probe.ProbeError('%s: exists; --create makes a new file'
                                   % args.path)
        err.write('%s: creating %s (%d bytes)\n' % (PROG, args.path,
                                                    args.create))
        probe.create_file(args.path, args.create)
    with probe.open_target(args.path, args.request_size,
                           args.allow_write) as target:
        kind = detect_kind(target) if args.kind == 'auto' else args.kind
        scheduler = args.scheduler or target.scheduler
        if kind == model.HDD:
            if 2 not in args.streams:
                raise probe.ProbeError('--streams must include 2 (the '
                                       'alpha fit)')
            if scheduler not in model.SCHEDULERS:
                raise probe.ProbeError(
                    '%s: scheduler %r of %s is not one of %s; pass '
                    '--scheduler' % (args.path, scheduler, target.device,
                                     ', '.join(model.SCHEDULERS)))
            for d in args.distances or ():
                if d + min(d / 4.0, probe.MAX_WINDOW_BYTES) > \
                        target.size_bytes:
                    raise probe.ProbeError(
                        '--distances: %d does not fit in %s (%d bytes)'
                        % (d, args.path, target.size_bytes))
            total = len(args.distances or default_distances(target)) + len(
                args.streams) * len(args.spans or [None])
        else:
            if not args.allow_write:
                raise probe.ProbeError(
                    'a flash profile needs the write curve: pass '
                    '--allow-write (it overwrites %s)' % args.path)
            total = 2 * len(args.qd)
        progress = Progress(err, total)
        progress.note('%s: %s, %d bytes, device %s, scheduler %s, %s '
                      'profile, %d points x %g s' % (
                          args.path, 'block device' if target.is_block
                          else 'NBD export' if target.device == 'nbd'
                          else 'file', target.size_bytes, target.device,
                          scheduler, kind, total, args.seconds_per_point))
        if kind == model.HDD:
            prof, calibration, table = calibrate_hdd(args, target,
                                                     scheduler, progress)
        else:
            prof, calibration, table = calibrate_flash(args, target,
                                                       progress)
        calibration.update({
            'target': args.path, 'target_bytes': target.size_bytes,
            'device': target.device, 'scheduler': scheduler,
            'seconds_per_point': args.seconds_per_point,
            'machine': ' '.join(platform.uname()),
            'cpus': os.cpu_count(),
            'date_utc': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'command': ' '.join([PROG] + list(argv))})
    return prof, calibration, table


def main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        argv = sys.argv[1:] if argv is None else argv
        args = parse_args(argv)
        prof, calibration, table = run(args, argv, err)
    except UsageError as e:
        err.write('%s: error: %s\n' % (PROG, e))
        return 2
    except probe.ProbeIOError as e:
        err.write('%s: %s\n' % (PROG, e))
        return 1
    except probe.ProbeError as e:
        err.write('%s: %s\n' % (PROG, e))
        return 2
    description = 'measured by %s' % PROG
    if args.output == '-':
        out.write(profile.dumps(prof, description, calibration))
        err.write(table + '\n')
    else:
        profile.dump(prof, args.output, description, calibration)
        out.write(table + '\n')
        err.write('%s: wrote %s\n' % (PROG, args.output))
    return 0


if __name__ == '__main__':
    sys.exit(main())
