"""``iothrottle-bench``: benchmarks that print numbers.

``iothrottle-bench seed000 --policy none --policy paper --policy
guarantee --json out.json --png out.png`` runs seed 000's experiment on
the testbed (see :mod:`iothrottle.bench.seed000`) and prints a
Table-2-like summary and whether the ``guarantee`` bar is met.

``iothrottle-bench seed001 [--setting bfq ...] --json out.json`` runs
seed 001's experiment on the block-layer testbed (consolidated guests on
the seek disk under each host I/O scheduler, and ``iothrottle-calibrate``
through the same block device; see :mod:`iothrottle.bench.seed001`) and
prints throughput and alpha per scheduler beside seed 001's ranking.

``iothrottle-bench scenarios --count N --seed S --json out.json --png
out.png`` draws N plans from seed S and runs each under ``none``,
``paper``, ``guarantee`` and ``static`` (see
:mod:`iothrottle.bench.scenarios`); ``--repeat K`` runs the draw K
times and prints each plan's figures per run.  ``seed000`` and
``scenarios`` take ``--config-file FILE`` (repeatable): the agents then
run with that file's ``[controller]`` and ``[storage]`` options instead
of the defaults, and the JSON records the options in force (see
:mod:`iothrottle.bench.settings`).

``scenarios --mode conductor`` runs the agents' policy in an
in-process conductor instead (:mod:`iothrottle.bench.conductor_mode`).

``iothrottle-bench report [LABEL=]RUN.json ... [--decompose]
[--losses] [--acted PATTERN] [--falls] [--caps] [--paced] [--queue]
[--stops] [--capacities]``
prints the tables of finished scenario runs from their JSON (and
traces; see
:mod:`iothrottle.bench.scenario_report`): no testbed, no services.

``iothrottle-bench faults [--fault NAME ...] [--short] --json out.json``
injects each fault of the matrix into a running control plane on the
testbed (see :mod:`iothrottle.bench.faults`) and prints, per fault, how
long a stale cap lasted, how soon the guarantees were defended again,
the decisions lost and any process death.

``iothrottle-bench scale --instances 10000 [--conductors 2] --json
out.json`` runs real conductor processes over RabbitMQ (and Redis with
several) against simulated compute hosts (the real agent and RPC code,
synthetic disks; see :mod:`iothrottle.bench.scale`) and prints per run
the decision time, the end-to-end time, the conductor's CPU and RSS,
messages per second and database write time against issue 12's targets;
first it measures one host's agent deciding 100 disks.  With
``--core-only`` it times the conductor's round in this process instead,
no services (``--profile``: where the time goes; see
:mod:`iothrottle.bench.scale_core`).
"""

import argparse
import collections
import contextlib
import json
import os
import re
import sys

from iothrottle.bench import faults
from iothrottle.bench import peers
from iothrottle.bench import report
from iothrottle.bench import seed000
from iothrottle.bench import seed001
from iothrottle.bench import seed004
from iothrottle.bench import settings
from iothrottle.compute import connection

PROG = 'iothrottle-bench'
POLICIES = ('none', 'paper', 'guarantee')
SCENARIO_POLICIES = ('none', 'paper', 'guarantee', 'static')
# Every arm --policy takes: the policies and the kernel's peers (these
# on the block-layer testbed only).
ARMS = SCENARIO_POLICIES + peers.PEERS
FAULT_NAMES = tuple(fault.name for fault in faults.FAULTS)

# One ``--repeat`` of the scenario bench: the store measured at its start
# and end (requests/s), its runs (one ({policy: summary}, {policy:
# [Interval]}) per plan), each plan's calibrated store (requests/s).
_Repeat = collections.namedtuple(
    '_Repeat', 'capacity_iops capacity_iops_end runs plan_iops')
# Plans one scenarios run may draw: 50 full plans are ~1.5 h already.
MAX_SCENARIO_COUNT = 50
# How much longer --stretch may make a plan: 5 x 22 s is ~2 minutes a
# plan and policy, ten plans of two policies ~45 minutes.
MAX_STRETCH = 5
# Runs of one draw --repeat may make: ten plans of two policies take ~10
# minutes a run on the 2-core testbed, five of them most of an hour.
MAX_REPEAT = 5
# Largest scale run: issue 12's biggest size; one process simulates every
# host, so more would measure the simulator, not the conductor.
MAX_SCALE_INSTANCES = 50000
# Rounds of a scale run: the first ones warm the conductor up (its first
# round meets every domain, its database every row) and are not
# measured; an hour of 5 s intervals at most.
SCALE_WARMUP_ROUNDS = 2
MAX_SCALE_ROUNDS = 720


def _one_to(option, most):
    """An argparse type: a whole number from 1 to ``most``."""
    def parse(text):
        value = int(text)
        if not 1 <= value <= most:
            raise argparse.ArgumentTypeError(
                '%s must be 1-%d, got %d' % (option, most, value))
        return value
    parse.__name__ = option.lstrip('-')   # argparse: "invalid count value"
    return parse


_count = _one_to('--count', MAX_SCENARIO_COUNT)
_stretch = _one_to('--stretch', MAX_STRETCH)
_repeat = _one_to('--repeat', MAX_REPEAT)


def _instances(text):
    value = int(text)
    if not 20 <= value <= MAX_SCALE_INSTANCES or value % 20:
        raise argparse.ArgumentTypeError(
            '--instances must be a multiple of 20 in [20, %d], got %d'
            % (MAX_SCALE_INSTANCES, value))
    return value


def _rounds(text):
    value = int(text)
    if not SCALE_WARMUP_ROUNDS < value <= MAX_SCALE_ROUNDS:
        raise argparse.ArgumentTypeError(
            '--rounds must be in [%d, %d], got %d'
            % (SCALE_WARMUP_ROUNDS + 1, MAX_SCALE_ROUNDS, value))
    return value


def _block_layer_option(parser, default=None):
    from iothrottle.testbed import blocklayer
    parser.add_argument(
        '--block-layer', choices=blocklayer.SCHEDULERS, metavar='SCHED',
        default=default,
        help='run on the block-layer testbed: the store under a host '
             'block device with this I/O scheduler (%s); default: %s' % (
                 ', '.join(blocklayer.SCHEDULERS), default or 'plain NBD'))


def _config_file_option(parser):
    parser.add_argument(
        '--config-file', action='append', metavar='FILE', default=[],
        help='run the agents with this file\'s [controller] and '
             '[storage] options (repeatable, read in order; default: the '
             'project\'s defaults); the JSON records what they set')


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split(
        '\n')[0])
    sub = parser.add_subparsers(dest='bench', required=True)
    s = sub.add_parser('seed000', help='one VM bursts, three keep floors')
    s.add_argument('--policy', action='append', choices=ARMS,
                   help='policy or kernel peer to run (repeatable; '
                        'default: %s)' % ', '.join(POLICIES))
    s.add_argument('--json', metavar='FILE', help='write results as JSON')
    s.add_argument('--png', metavar='FILE',
                   help='write the stacked throughput figure')
    s.add_argument('--short', action='store_true',
                   help='compressed plan (ramp every 8 s) for the e2e test')
    s.add_argument('--quiet', action='store_true',
                   help='no per-interval rows')
    _block_layer_option(s)
    _config_file_option(s)
    s1 = sub.add_parser('seed001', help='consolidated guests on the seek '
                                        'disk under each host scheduler')
    s1.add_argument('--setting', action='append',
                    choices=[st.label for st in seed001.SETTINGS],
                    help='scheduler setting to run (repeatable; default: '
                         'all)')
    s1.add_argument('--json', metavar='FILE', help='write results as JSON')
    s1.add_argument('--short', action='store_true',
                    help='2 guests at the two ends of the seek disk, short '
                         'windows (the e2e test)')
    s1.add_argument('--prefix', default='itb-s001-',
                    help='testbed prefix (default: %(default)s)')
    s4 = sub.add_parser('seed004', help='cache-aware ballooning vs '
                                        'proportional, two readers')
    s4.add_argument('--policy', required=True,
                    choices=('none', 'proportional', 'cams'))
    s4.add_argument('--json', metavar='FILE', help='write results as JSON')
    s4.add_argument('--ratio', type=int, action='append',
                    help='VM2/VM1 frequency ratio (repeatable; default '
                         '1 2 4 8)')
    s4.add_argument('--short', action='store_true',
                    help='ratio 1 only, shorter windows (the e2e test)')
    _block_layer_option(s4)
    sc = sub.add_parser('scenarios', help='randomized plans, every policy')
    sc.add_argument('--count', type=_count, default=10,
                    help='plans to draw (1-50; default 10)')
    sc.add_argument('--seed', type=int, default=0,
                    help='seed of the draw (default 0)')
    sc.add_argument('--policy', action='append', choices=ARMS,
                    help='policy or kernel peer to run (repeatable; '
                         'default: %s)' % ', '.join(SCENARIO_POLICIES))
    sc.add_argument('--short', action='store_true',
                    help='shorter runs, at most 5 guests (the e2e test)')
    sc.add_argument('--stretch', type=_stretch, default=1, metavar='N',
                    help='run every plan N times longer, each event at N '
                         'times its time (1-%d; default 1): a transient '
                         'weighs N times less in the totals'
                    % MAX_STRETCH)
    sc.add_argument('--repeat', type=_repeat, default=1, metavar='K',
                    help='run the draw K times (1-%d; default 1) and '
                         'print each plan\'s figures per run: the spread '
                         'a change is judged against (the tables and the '
                         'figure are the first run\'s)' % MAX_REPEAT)
    sc.add_argument('--json', metavar='FILE', help='write results as JSON')
    sc.add_argument('--png', metavar='FILE',
                    help='write the per-plan figure')
    sc.add_argument('--plan', type=int, action='append', metavar='K',
                    help='run only plan K of the draw (repeatable)')
    sc.add_argument('--trace', metavar='FILE',
                    help='write every interval: each guest\'s KB/s, '
                         'latency and cap, and the decisions taken')
    sc.add_argument('--mode', choices=('standalone', 'conductor'),
                    default='standalone',
                    help='where the policy runs: in the agent '
                         '(standalone, the default) or in a conductor the '
                         'agent reports to, with the watch its checks '
                         'read cast back (conductor, in one process)')
    sc.add_argument('--dry-run', action='store_true',
                    help='print the drawn plans and exit')
    _block_layer_option(sc)
    _config_file_option(sc)
    f = sub.add_parser('faults', help='inject faults into a running '
                                      'control plane')
    f.add_argument('--fault', action='append', choices=FAULT_NAMES,
                   help='fault to inject (repeatable; default: all)')
    f.add_argument('--short', action='store_true',
                   help='three faults only (the e2e test)')
    f.add_argument('--json', metavar='FILE', help='write results as JSON')
    _block_layer_option(f)
    sl = sub.add_parser('scale', help='conductors under thousands of '
                                      'simulated instances')
    sl.add_argument('--instances', type=_instances, action='append',
                    help='instances of one run (repeatable; a multiple of '
                         '20; default 1000)')
    sl.add_argument('--conductors', type=int, default=1, choices=(1, 2, 3),
                    help='conductor processes (more than one: tooz on '
                         'Redis, reports by fanout; default 1)')
    sl.add_argument('--interval', type=float, default=5.0,
                    help='control interval in seconds (default 5)')
    sl.add_argument('--rounds', type=_rounds, default=12,
                    help='intervals per run, the first %d not measured '
                         '(default 12)' % SCALE_WARMUP_ROUNDS)
    sl.add_argument('--agent-disks', type=int, default=100,
                    help='disks of the agent measure (0: skip it; '
                         'default 100)')
    sl.add_argument('--core-only', action='store_true',
                    help="time the conductor's round in this process, "
                         'without services (see iothrottle.bench.'
                         'scale_core)')
    sl.add_argument('--profile', action='store_true',
                    help='with --core-only: print a cProfile report of '
                         'the measured rounds')
    sl.add_argument('--json', metavar='FILE', help='write results as JSON')
    p = sub.add_parser('peers', help='guarantee beside the kernel\'s '
                                     'peers (BFQ weights, blk-throttle)')
    p.add_argument('--count', type=_count, default=10,
                   help='scenario plans to draw (1-50; default 10)')
    p.add_argument('--seed', type=int, default=0,
                   help='seed of the scenario draw (default 0)')
    p.add_argument('--short', action='store_true',
                   help='the short seed-000 plan and short scenarios')
    p.add_argument('--json', metavar='FILE', help='write results as JSON')
    p.add_argument('--trace', metavar='FILE',
                   help='write every interval of the scenario plans: each '
                        'guest\'s KB/s, latency and cap, and the decisions '
                        'taken')
    _block_layer_option(p, default='mq-deadline')
    sub.add_parser('demo', help='watch the standalone service keep the '
                                'guarantees while VM1 bursts')
    r = sub.add_parser('report', help='tables over finished scenario '
                                      'runs (their JSON and traces)')
    r.add_argument('runs', nargs='+', metavar='[LABEL=]RUN.json',
                   help='JSON of a scenarios run; runs of the same draw '
                        'line up plan by plan, one column per label '
                        '(default: the file name), so runs of several '
                        'draws under one label make one column')
    r.add_argument('--policy', default='guarantee', choices=ARMS,
                   help='policy to report on (default guarantee)')
    r.add_argument('--decompose', action='store_true',
                   help='also read each run\'s trace (RUN.trace beside '
                        'it) and split its overbooked intervals into cap '
                        'of share and got of cap, and list the guests '
                        'under their shares; on plans that fit, list the '
                        'guests that missed their need and the plans '
                        'under the totals bar interval by interval')
    r.add_argument('--losses', action='store_true',
                   help='also read each run\'s trace and split the '
                        'requests the policy lost against none on the '
                        'plans that fit by the decision in force over '
                        'each interval (tighten, release, calm hold, '
                        '...), per run and over all runs given')
    r.add_argument('--acted', metavar='PATTERN', type=_pattern,
                   help='also read each run\'s trace and, for the '
                        'scored intervals right after each line under an '
                        'interval that matches PATTERN (a regular '
                        'expression: a rule\'s words in a decision, a '
                        'domain line\'s reading), print the least share '
                        'a guaranteed guest got, in that run and in the '
                        'same intervals of every other label\'s run of '
                        'the draw')
    r.add_argument('--onsets', action='store_true',
                   help='also read each run\'s trace and list the '
                        'intervals that read congested after one that '
                        'released a cap and did not, with more '
                        'completed (a queue a release began), and the '
                        'learned capacity after each of the two')
    r.add_argument('--falls', action='store_true',
                   help='also read each run\'s trace and list the '
                        'intervals after which the learned capacity fell, '
                        'with the latency and what completed against the '
                        'interval before (the controller\'s readings on '
                        'the domain line, else the uncapped guests\' '
                        'latency and requests/s), and which of them read '
                        'as a queue that drained')
    r.add_argument('--caps', action='store_true',
                   help='also read each run\'s trace and print what the '
                        'guests pushing against their caps completed over '
                        'them, by whether the decision before the interval '
                        'kept, raised or cut the cap (QEMU lets a tenth '
                        'of a second of a changed cap through at once), '
                        'per run and over all runs given')
    r.add_argument('--paced', action='store_true',
                   help='also read each run\'s trace and print, over all '
                        'runs given, what the uncapped guests whose '
                        'processes all run paced did of their demand in '
                        'the scored intervals, by their latency over '
                        'their period and by the decisions in force')
    r.add_argument('--queue', action='store_true',
                   help='also read each run\'s trace and print, over all '
                        'runs given, the controller\'s readings of the '
                        'store (the domain line\'s latency and what '
                        'completed) by the load of its border, the latency '
                        'in the border\'s time per request, beside what '
                        'M/M/1 and M/D/1 queues show at that load, and '
                        'the releases a latency margin bounded by the '
                        'same load: the part of the room under the border '
                        'they took, the room and the step')
    r.add_argument('--stops', action='store_true',
                   help='also read each run\'s trace and print, per '
                        'label, the requests/s against none\'s in the '
                        'intervals a guest stopped in (the first after '
                        'each stop) and over the whole plans, on the '
                        'plans that fit with a guest stopping')
    r.add_argument('--capacities', action='store_true',
                   help='also read each run\'s trace and score each '
                        'overbooked plan\'s least share against four '
                        'capacities: the run\'s first calibration (one '
                        'guest), the plan\'s own (its guests all writing, '
                        'what the bench scores by), what the store '
                        'completed under none over the same intervals, '
                        'and what it completed under the policy; per run '
                        'and over all runs given')
    args = parser.parse_args(argv)
    arms = (peers.POLICIES if args.bench == 'peers'
            else getattr(args, 'policy', None) or ())
    problem = _peer_problem(arms, getattr(args, 'block_layer', None))
    if problem:
        parser.error(problem)
    if hasattr(args, 'config_file'):
        try:
            args.settings = settings.effective(args.config_file)
        except ValueError as exc:
            parser.error(str(exc))
    return args


def _peer_problem(arms, block_layer):
    """Why the kernel peers among ``arms`` cannot run on this testbed
    (None if they can)."""
    for arm in arms:
        if arm in peers.PEERS and block_layer is None:
            return ('--policy %s needs --block-layer SCHED: it acts in '
                    'the host block layer' % arm)
    return None


def run_seed000(args, out):
    from iothrottle.bench import runner   # needs libvirt and the testbed

    plan = seed000.default_plan(short=args.short)
    policies = args.policy or list(POLICIES)
    run = runner.Seed000Run(plan, out, block_layer=args.block_layer,
                            config_files=args.config_file)
    on_interval = None if args.quiet else report.live_row(out, plan)
    results, series = run.run(policies, on_interval)
    out.write('\n' + report.seed000_table(results) + '\n')
    ok, reasons = seed000.bar(results)
    if 'guarantee' in results:
        out.write('bar for the guarantee policy: %s\n' % (
            'met' if ok else 'NOT met: ' + '; '.join(reasons)))
    document = {'plan': {'delay_ms': plan.delay_ms,
                         'block_layer': args.block_layer,
                         'interval_s': plan.interval_s,
                         'ramp_s': plan.ramp_s, 'tail_s': plan.tail_s,
                         'block_kb': plan.block_kb,
                         'capacity_iops': run.capacity.max_iops},
                'bar': {'met': ok, 'reasons': reasons},
                'config_files': args.config_file,
                'settings': args.settings}
    document.update(results)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    if args.png:
        report.seed000_figure(args.png, series,
                              [vm.name for vm in plan.vms])
    return 0


def run_seed001(args, out):
    from iothrottle.bench import seed001_runner   # libvirt, testbed

    plan = seed001.default_plan(short=args.short, settings=args.setting)

    def on_row(row):
        out.write('  %-12s guests %.1f KB/s (%s)\n' % (
            row['label'], row['total_bytes_sec'] / 1e3, ', '.join(
                '%s %.1f' % (vm, b / 1e3)
                for vm, b in row['guest_bytes_sec'].items())))
        out.flush()
    rows = seed001_runner.Seed001Run(plan, out, prefix=args.prefix).run(
        on_row)
    out.write('\n' + seed001.table(rows, plan) + '\n')
    out.write('alpha_by_scheduler (calibrate, default tunables): %s\n'
              % json.dumps(seed001.alpha_by_scheduler(rows),
                           sort_keys=True))
    if args.json:
        import dataclasses
        document = {'plan': dataclasses.asdict(plan),
                    'ranking': seed001.ranking(rows),
                    'paper_order_kept': seed001.paper_order_kept(rows),
                    'long_slice_gain': seed001.long_slice_gain(rows),
                    'alpha_by_scheduler': seed001.alpha_by_scheduler(rows),
                    'rows': rows}
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


def run_seed004(args, out):
    import dataclasses

    from iothrottle.bench import seed004_runner   # libvirt, testbed

    plan = seed004.default_plan(short=args.short)
    if args.ratio:
        plan = dataclasses.replace(plan, ratios=tuple(args.ratio))
    document = seed004_runner.Seed004Run(
        plan, out, block_layer=args.block_layer).run(args.policy)
    out.write('\n' + seed004.table({args.policy: document}) + '\n')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


@contextlib.contextmanager
def _tracer(path, run):
    """A scenario_runner.Tracer of ``run`` writing to ``path`` while in
    the block, or None without a path."""
    from iothrottle.bench import scenario_runner   # libvirt, testbed

    if not path:
        yield None
        return
    with open(path, 'w') as trace:
        yield scenario_runner.Tracer(trace, run)


def run_scenarios(args, out):
    from iothrottle.bench import scenarios

    plans = scenarios.draw_plans(args.count, args.seed, short=args.short)
    if args.plan:
        plans = [p for p in plans if p.index in args.plan]
    plans = [scenarios.stretched(p, args.stretch) for p in plans]
    if args.dry_run:
        for plan in plans:
            out.write(plan.describe() + '\n')
            for e in plan.events:
                out.write('  %5.1f s %-3s %-5s %s\n' % (
                    e.at_s, e.guest, e.action, ' '.join(
                        '%s@%.0f' % (s.rw, s.rate_kb_s) for s in e.streams)))
        return 0
    from iothrottle.bench import scenario_runner   # libvirt, testbed

    policies = list(args.policy or SCENARIO_POLICIES)
    if 'none' not in policies:
        policies.insert(0, 'none')   # every ratio is against 'none'
    run = scenario_runner.ScenarioRun(plans, out,
                                      block_layer=args.block_layer,
                                      config_files=args.config_file,
                                      mode=args.mode)

    def on_plan(plan, results):
        out.write(scenarios.plan_row(plan, results) + '\n')
        out.flush()
    repeats = []
    with _tracer(args.trace, run) as tracer:
        for k in range(1, args.repeat + 1):
            if args.repeat > 1:
                out.write('== repeat %d of %d\n' % (k, args.repeat))
                if tracer is not None:
                    tracer.out.write('repeat %d\n' % k)
            runs = run.run(policies, on_plan=on_plan, on_interval=tracer)
            repeats.append(_Repeat(run.capacity.max_iops,
                                   run.capacity_end.max_iops, runs,
                                   run.plan_iops))
    # Per repeat, one {policy: summary} per plan; the tables are the
    # first repeat's.
    results = [[r for r, _ in rep.runs] for rep in repeats]
    first = repeats[0]
    summary = scenarios.aggregate(plans, results[0])
    out.write('\n' + scenarios.table(summary) + '\n')
    document = {
        'seed': args.seed, 'count': args.count, 'short': args.short,
        'stretch': args.stretch, 'block_layer': args.block_layer,
        'mode': args.mode, 'repeat': args.repeat,
        'capacity_iops': first.capacity_iops,
        'capacity_iops_end': first.capacity_iops_end,
        'config_files': args.config_file, 'settings': args.settings,
        'summary': summary,
        'plans': scenarios.plans_document(plans, results[0],
                                          first.plan_iops)}
    if args.repeat > 1:
        rows = scenarios.spread(plans, results)
        out.write('\nper plan, each repeat (%s):\n%s\n' % (
            ', '.join('store %.1f-%.1f IOPS' % (rep.capacity_iops,
                                                rep.capacity_iops_end)
                      for rep in repeats),
            scenarios.spread_table(rows)))
        document['spread'] = rows
        document['repeats'] = [
            {'capacity_iops': rep.capacity_iops,
             'capacity_iops_end': rep.capacity_iops_end,
             'summary': scenarios.aggregate(plans, r),
             'plans': scenarios.plans_document(plans, r, rep.plan_iops)}
            for rep, r in zip(repeats, results)]
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    if args.png:
        scenario_runner.figure(args.png, plans, first.runs, policies)
    return 0


def run_peers(args, out):
    """The seed-000 plan, then the scenarios, each on its own
    block-layer testbed, under every arm of peers.POLICIES."""
    from iothrottle.bench import runner   # libvirt, testbed
    from iothrottle.bench import scenario_runner
    from iothrottle.bench import scenarios

    plan = seed000.default_plan(short=args.short)
    out.write('== seed-000 plan, block layer %s\n' % args.block_layer)
    s0 = runner.Seed000Run(plan, out, prefix='itb-peer-',
                           block_layer=args.block_layer)
    results, _ = s0.run(list(peers.POLICIES), report.live_row(out, plan))
    out.write('\n' + report.seed000_table(results) + '\n')
    plans = scenarios.draw_plans(args.count, args.seed, short=args.short)
    out.write('== scenarios seed %d, block layer %s\n'
              % (args.seed, args.block_layer))
    sc = scenario_runner.ScenarioRun(plans, out, prefix='itb-peer-',
                                     block_layer=args.block_layer)
    with _tracer(args.trace, sc) as tracer:
        runs = sc.run(list(peers.POLICIES), on_plan=lambda plan, r: out.write(
            scenarios.plan_row(plan, r) + '\n'), on_interval=tracer)
    scenario_results = [r for r, _ in runs]
    rows = peers.rows(results, plans, scenario_results)
    out.write('\n' + peers.table(rows) + '\n')
    if args.json:
        document = {
            'block_layer': args.block_layer, 'seed': args.seed,
            'count': args.count, 'short': args.short, 'rows': rows,
            'seed000': dict(results, capacity_iops=s0.capacity.max_iops),
            'scenarios': {
                'capacity_iops': sc.capacity.max_iops,
                'capacity_iops_end': sc.capacity_end.max_iops,
                'summary': scenarios.aggregate(plans, scenario_results),
                'plans': scenarios.plans_document(
                    plans, scenario_results, sc.plan_iops)}}
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


def run_faults(args, out):
    from iothrottle.bench import fault_runner   # needs the testbed

    names = args.fault or (faults.SHORT if args.short else FAULT_NAMES)
    bench = fault_runner.FaultBench(names, out,
                                    block_layer=args.block_layer)

    def on_row(row):
        out.write('   %s\n' % faults.table([row], bench.plan)
                  .splitlines()[-1])
        out.flush()
    rows = bench.run(on_row=on_row)
    out.write('\n' + faults.table(rows, bench.plan) + '\n')
    plan = bench.plan
    document = {
        'plan': {'interval_s': plan.interval_s, 'lease_s': plan.lease_s,
                 'delay_ms': plan.delay_ms,
                 'capacity_iops': bench.capacity.max_iops},
        'faults': [dict(row, misses=faults.expectations(row, plan))
                   for row in rows]}
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


def run_scale_core(args, out):
    from iothrottle.bench import scale
    from iothrottle.bench import scale_core
    document = {'core_only': []}
    for instances in args.instances or [1000]:
        plan = scale.Plan(instances=instances, interval_s=args.interval,
                          rounds=args.rounds,
                          warmup_rounds=SCALE_WARMUP_ROUNDS)
        summary = scale_core.run(plan, profile=args.profile)
        out.write('%d instances, %d domains, in this process: '
                  'Core.decide %.1f / %.1f ms CPU p50 / p99 (%.2f us a '
                  'disk), %.1f decisions a round, %d rounds\n' % (
                      plan.instances, plan.domains,
                      summary['decide_cpu_ms_p50'],
                      summary['decide_cpu_ms_p99'],
                      summary['us_per_disk_p50'],
                      summary['decisions_per_round'],
                      summary['rounds_measured']))
        if args.profile:
            out.write(summary['profile'])
        document['core_only'].append(summary)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


def run_scale(args, out):
    from iothrottle.bench import scale
    from iothrottle.bench import scale_runner
    from iothrottle.rpc import threads
    if args.core_only:
        return run_scale_core(args, out)
    threads.setup()   # oslo.messaging and tooz: no eventlet
    document = {'runs': []}
    if args.agent_disks > 0:
        agent = scale_runner.agent_cpu(args.agent_disks)
        document['agent'] = agent
        out.write('agent, %d disks, one getAllDomainStats (fake libvirt '
                  'connection): %.1f ms CPU per interval (p99 %.1f; '
                  'collection %.1f; %.1f checks of %.1f), %.2f %% of a '
                  'core at 5 s\n' % (
                      agent['disks'], agent['cpu_ms_mean'],
                      agent['cpu_ms_p99'], agent['collect_cpu_ms_mean'],
                      agent['checks_per_interval'],
                      agent['check_cpu_ms_mean'],
                      agent['cpu_share_at_5s'] * 100))
    tty = out.isatty()
    for instances in args.instances or [1000]:
        plan = scale.Plan(instances=instances, interval_s=args.interval,
                          rounds=args.rounds,
                          warmup_rounds=SCALE_WARMUP_ROUNDS,
                          conductors=args.conductors)
        out.write('%d instances, %d hosts, %d domains, %d conductor(s)\n'
                  % (plan.instances, plan.hosts, plan.domains,
                     plan.conductors))

        def on_round(done, total, send_s):
            if tty:
                out.write(scale.progress(done, total, label='reports sent '
                                         'in %.2f s' % send_s))
                out.flush()
        summary, rows, conductors = scale_runner.ScaleRun(plan, out).run(
            on_round)
        if tty:
            out.write('\n')
        out.write(scale.table([summary]) + '\n')
        for target, met in summary['targets'].items():
            out.write('  %-22s %s\n' % (target, {True: 'met', False:
                                                 'MISSED', None: '-'}[met]))
        document['runs'].append({'summary': summary, 'rounds': rows,
                                 'conductors': conductors})
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(document, f, indent=2)
    return 0


def _pattern(text):
    """``--acted``'s regular expression, compiled; argparse names the
    option and the culprit when it is not one."""
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(
            'not a regular expression: %r (%s)' % (text, exc))


def run_report(args, out):
    from iothrottle.bench import scenario_report

    runs, paths = [], []
    for arg in args.runs:
        label, _, path = arg.rpartition('=')
        label = label or os.path.splitext(os.path.basename(path))[0]
        paths.append(path)
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as exc:
            out.write('%s: cannot read it (%s)\n' % (path, exc.strerror))
            return 2
        except ValueError as exc:
            out.write('%s: not JSON (%s)\n' % (path, exc))
            return 2
        if not (isinstance(doc, dict) and 'seed' in doc
                and isinstance(doc.get('plans'), list)):
            out.write('%s: not the JSON of a scenarios run (no seed and '
                      'plans)\n' % path)
            return 2
        runs.append((label, doc))
    out.write(scenario_report.compare_table(
        *scenario_report.compare(runs, args.policy)) + '\n')
    noise = scenario_report.noise_text(
        scenario_report.share_noise(runs, args.policy))
    if noise:
        out.write(noise + '\n')
    if not (_per_run_tables(args) or args.acted or args.paced
            or args.queue or args.stops):
        return 0
    summed, traced, passes, paced, queue, bound = {}, [], [], [], [], []
    shared = []
    stops = {}   # label -> StopTotals, in the labels' order
    for path, (label, doc) in zip(paths, runs):
        trace = os.path.splitext(path)[0] + '.trace'
        if not os.path.exists(trace):
            out.write('\n%s: no trace beside it (%s)\n' % (label, trace))
            continue
        with open(trace) as f:
            intervals = scenario_report.parse_trace(f)
        if args.acted:
            traced.append((label, doc, intervals, scenario_report.acted_at(
                intervals, args.acted, args.policy)))
        if args.paced:
            paced.extend(scenario_report.paced_rates(intervals, doc,
                                                     args.policy))
        if args.stops:
            stops.setdefault(label, scenario_report.StopTotals()).add(
                scenario_report.stop_totals(intervals, doc, args.policy))
        if args.queue:
            queue.extend(scenario_report.queue_readings(intervals, doc,
                                                        args.policy))
            bound.extend(scenario_report.bound_releases(intervals, doc,
                                                        args.policy))
        if not _per_run_tables(args):
            continue
        out.write('\n== %s\n' % path)
        if args.caps:
            mine = scenario_report.cap_passes(intervals, doc, args.policy)
            passes.extend(mine)
            out.write(scenario_report.cap_passes_table(mine) + '\n')
        if args.onsets:
            out.write(scenario_report.onsets_table(
                scenario_report.release_onsets(intervals, args.policy))
                + '\n')
        if args.falls:
            out.write(scenario_report.falls_table(
                scenario_report.capacity_falls(intervals, doc,
                                               args.policy)) + '\n')
        if args.decompose:
            out.write(scenario_report.decomposed_text(intervals, doc,
                                                      args.policy))
        if args.capacities:
            mine = scenario_report.capacity_shares(intervals, doc,
                                                   args.policy)
            shared.extend(mine)
            out.write(scenario_report.capacity_shares_table(mine) + '\n')
        if args.losses:
            mine = scenario_report.losses_by_bar(intervals, doc,
                                                 args.policy)
            scenario_report.add_losses(summed, mine)
            out.write(scenario_report.losses_text(mine) + '\n')
    if args.caps and len(runs) > 1:
        out.write('\n== all runs\n%s\n'
                  % scenario_report.cap_passes_table(passes))
    if args.capacities and len(runs) > 1:
        out.write('\n== all runs\n%s\n'
                  % scenario_report.capacity_shares_summary(shared))
    if args.losses and len(runs) > 1:
        out.write('\n== all runs\n%s\n'
                  % scenario_report.losses_text(summed))
    if args.paced:
        out.write('\n%s\n' % scenario_report.paced_table(paced))
    if args.queue:
        out.write('\n%s\n' % scenario_report.queue_table(queue))
        out.write('\n%s\n' % scenario_report.bound_releases_table(bound))
    if args.stops:
        out.write('\n%s\n' % scenario_report.stop_totals_table(stops))
    if args.acted:
        out.write('\n%s\n' % scenario_report.acted_table(
            scenario_report.acted(traced, args.policy),
            args.acted.pattern))
    return 0


def _per_run_tables(args):
    """Whether ``report`` prints a table for each run's trace."""
    return (args.decompose or args.losses or args.falls or args.caps
            or args.onsets or args.capacities)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # The benches' agents read metadata a domain may not have yet; what
    # fails is reported by them, not by libvirt's default stderr handler.
    connection.silence_default_errors()
    run = {'seed000': run_seed000, 'seed001': run_seed001,
           'seed004': run_seed004, 'scenarios': run_scenarios,
           'faults': run_faults, 'scale': run_scale, 'peers': run_peers,
           'report': run_report}.get(args.bench)
    if run is not None:
        return run(args, sys.stdout)
    from iothrottle.bench import demo
    return demo.main(sys.stdout)


if __name__ == '__main__':
    sys.exit(main())
