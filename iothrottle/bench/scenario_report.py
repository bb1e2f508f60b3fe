"""Reports over finished scenario runs: their JSON and their traces.

``iothrottle-bench report`` reads what ``iothrottle-bench scenarios
--json F --trace T`` wrote and prints the tables doc/scenarios.rst is
made of, so that a reader can recompute them from the run files in
doc/scenario-runs/:

- ``compare``: one row per plan of every run given, the issue's
  targets each met (``scenarios.targets``, as the run recorded them),
  and per run how many plans met each target, with the mean least
  share of the overbooked plans.  Runs of the same draw line up plan
  by plan: a change is judged against the spread of two runs of it.
- ``decompose`` (with the traces): on the overbooked intervals the
  bench scores, what a capped guaranteed guest's cap was of its share
  (the controller's share scale and its cost model against the
  bench's) and what it got of its cap (QEMU's throttle), as medians
  per block size; then every guaranteed guest under
  ``UNDER_SHARE`` of its share, with its requests in flight ``q``
  (Little's law: requests/s x latency) and the latency at which ``q``
  requests in flight would have made its share, ``q / share``.  A
  guest under its share with a cap that does not hold it and a latency
  over that target is latency-bound: no cut of its own cap helps it,
  only a shorter queue at the store.
- ``missed_needs`` and ``interval_totals`` (with the traces): the same
  rows for every guaranteed guest that missed its need in a scored
  interval of a plan that fits, and, per plan that fits, each
  interval's requests/s against ``none``'s with the guests capped: the
  floors and totals bars taken apart as ``decompose`` takes the
  overbooked one.
- ``losses`` (with the traces): over the plans that fit, the requests/s
  a policy lost against ``none`` by the decision in force over each
  interval (a tightening, a release, a calm hold, ...): which of the
  controller's rules the totals bar pays for.
- ``acted`` (with the traces): the scored intervals right after each
  line of a run's trace that matches a pattern (a rule's words in a
  decision, a domain line's reading), the least share (or need) any
  guaranteed guest got in them, and the same intervals of every other
  run of the draw: what a rule did where it acted, set against runs
  where it did not, rather than over whole plans that two runs of the
  same code move by as much.
- ``paced_rates`` (with the traces): what each uncapped guest whose
  processes all run paced did of its demand in the scored intervals,
  against its latency over its period, by the decisions in force: the
  controller's latency limit for a guest at its depth
  (``guarantee.depth_latency_s``) read off the runs.
- ``queue_readings`` (with the traces): the controller's own reading of
  each interval (the domain line's latency and what completed) by the
  load of its border, the latency in the border's time per request,
  against what M/M/1 and M/D/1 queues would show at that load: the
  queue models the release's room is read with
  (``guarantee.queue_room_part``), set against the store they model;
  and ``bound_releases``, the releases a latency margin bounded, by the
  same load: how much room there was, and what part of it they took.
- ``stop_totals`` (with the traces): on the plans that fit with a
  guest stopping, the requests/s against ``none``'s in the intervals a
  guest stopped in and over the whole plans: what a policy that
  decides once an interval loses where a guest stops (the checks
  within an interval, ``iothrottle.controller.idle``, are its answer).
- ``capacity_shares`` (with the traces): each overbooked plan's least
  share scored against four capacities, the run's first calibration
  (one guest), the plan's own (its guests all writing, what the bench
  scores by since 2026-12-03; runs before it have none), what the
  store completed under ``none`` over the same intervals and what it
  completed under the policy: how much of a missed share is a capacity
  the store did not have while the plan ran, whoever controlled it.

Pure: text and documents in, rows and text out; the plans are drawn
again from each run's seed (``scenarios.draw_plan``) to know which
intervals the bench counted.
"""

import collections
import dataclasses
import math
import re
import statistics
import types

from iothrottle.bench import scenarios
from iothrottle.compute import iotune
from iothrottle.controller import guarantee
from iothrottle.controller import model

# A guaranteed guest under this fraction of its share is listed by
# ``decompose``: the bar for overbooked domains.
UNDER_SHARE = scenarios.TARGET_OVERBOOKED_SHARE

# A capped guest doing at least this fraction of its cap is held by it:
# the controller's own reading.
HELD_BY_CAP = guarantee.AT_CAP_FRACTION

# What ``paced_table`` counts as a paced guest keeping its pace: the
# fraction of its demand the floors bar asks of a need.
TARGET_PACED = scenarios.TARGET_SATISFIED

# The targets in the order the README names them, with the word a row
# uses for each.
TARGET_WORDS = (('satisfied', 'floors'), ('reaction', 'reaction'),
                ('total', 'totals'), ('overbooked_share', 'overbooked'),
                ('floorless_cut', 'floorless'),
                ('beats_static_total', 'beats static'),
                ('static_satisfaction', 'static sat'))

_LINE = re.compile(r'^plan (\d+) (\S+)\s+t=\s*([\d.]+)( overbooked)? (.*)$')
_GUEST = re.compile(r'(\S+?)=(\d+)/([\d-]+)(?:\[cap (\d+)\])?@(\d+)ms')
_DECISION = re.compile(r'^    (\S+) cap: .*-> ([\d.]+) IOPS, (\d+) B/s')
_SCALE = re.compile(r'share scale ([\d.]+)')
_CAPACITY = re.compile(r'domain: capacity ([\d.]+) IOPS')
_READ = re.compile(r'read ([\d.]+) ms at ([\d.]+) IOPS')
_BASELINE = re.compile(r'baseline ([\d.]+) ms')
_CAP_LINE = re.compile(r'^    \S+ (cap|release): (.*)$')

# What a decision line says, in the words of the controller's trace
# (``guarantee.Decision.reason``), and the kind ``losses`` files it
# under; the first match wins, a line matching none is 'other'.
DECISION_KINDS = (
    ('release', re.compile(r'^no guarantee at risk; cap released')),
    ('calm hold', re.compile(r'^held: calm for')),
    ('floor hold', re.compile(r'^held: [\w, ]+ within [\d.]+ % of '
                              r'guarantee')),
    ('other hold', re.compile(r'^held: ')),
    ('tighten', re.compile(r'^(kept while tightening: )?'
                           r'(latency|domain load) ')),
    ('early', re.compile(r'^early: ')),
)

# When an interval's decisions differ in kind, the one that names it:
# a tightening decides what the next interval can do; then a release,
# a lift, and the holds.  A check's growth within an interval is
# listed with that interval's decisions but acted in it, before them:
# it names none (the decision after it is in force over the next).
KIND_ORDER = ('tighten', 'release', 'lift', 'floor hold', 'calm hold',
              'other hold', 'other', 'early', 'no cap')


@dataclasses.dataclass(frozen=True)
class GuestInterval:
    """One guest over one traced interval."""
    kb_s: float
    need_kb_s: float      # None: no need that interval (no floor, idle)
    cap_iops: float       # None: uncapped
    cap_kb_s: float       # None: uncapped
    latency_ms: float


@dataclasses.dataclass(frozen=True)
class TracedInterval:
    plan: int
    policy: str
    end_s: float
    overbooked: bool
    guests: dict          # name -> GuestInterval
    share_scale: float    # None when the trace shows none
    decided: frozenset = frozenset()   # kinds decided at end_s
    notes: tuple = ()     # the indented lines under it: decisions, domain
    learned_iops: float = None   # the domain line's capacity, if shown
    read: tuple = None    # the domain line's (latency ms, IOPS), if shown
    baseline_ms: float = None    # the domain line's baseline, if shown

    @property
    def at(self):
        """``(plan, end_s)``, the end to a tenth of a second: what lines
        an interval up with its twin in another run."""
        return (self.plan, round(self.end_s, 1))


def decision_kind(line):
    """The kind (:data:`DECISION_KINDS`) of one decision line of a
    trace (``    gN cap: ...``, or ``    gN release: ...`` for a cap
    lifted), None for any other line."""
    m = _CAP_LINE.match(line)
    if not m:
        return None
    if m.group(1) == 'release':
        return 'lift'
    for kind, pattern in DECISION_KINDS:
        if pattern.match(m.group(2)):
            return kind
    return 'other'


def interval_kind(decided):
    """The kind that names a set of decisions (:data:`KIND_ORDER`);
    'no cap' when there were none."""
    return next((k for k in KIND_ORDER if k in decided), 'no cap')


def parse_trace(lines):
    """The intervals of a trace, in order.

    A cap's KB/s is the bytes axis of the last decision that set it
    (``-> X IOPS, Y B/s``) while the interval line shows the same IOPS,
    else ``None`` (filled in from the block size by ``decompose``).
    """
    out = []
    decided = {}          # (plan, policy, guest) -> (iops, bytes/s)
    current, notes = None, []

    def close():
        if current is not None:
            out.append(dataclasses.replace(current, notes=tuple(notes)))

    for line in lines:
        m = _LINE.match(line)
        if m:
            close()
            notes = []
            plan, policy = int(m.group(1)), m.group(2)
            guests = {}
            for g in _GUEST.finditer(m.group(5)):
                name, cap = g.group(1), g.group(4)
                cap_iops = float(cap) if cap else None
                cap_kb_s = None
                last = decided.get((plan, policy, name))
                if cap_iops is not None and last and \
                        round(last[0]) == cap_iops:
                    cap_kb_s = last[1] / 1024.0
                guests[name] = GuestInterval(
                    kb_s=float(g.group(2)),
                    need_kb_s=(None if g.group(3) == '-'
                               else float(g.group(3))),
                    cap_iops=cap_iops, cap_kb_s=cap_kb_s,
                    latency_ms=float(g.group(5)))
            current = TracedInterval(plan, policy, float(m.group(3)),
                                     bool(m.group(4)), guests, None)
            continue
        if current is not None and line.startswith('    '):
            notes.append(line.rstrip('\n'))
        kind = decision_kind(line)
        if kind and current is not None:
            current = dataclasses.replace(
                current, decided=current.decided | {kind})
        d = _DECISION.match(line)
        if d and current is not None:
            decided[(current.plan, current.policy, d.group(1))] = (
                float(d.group(2)), float(d.group(3)))
            continue
        if current is not None and line.startswith('    domain:'):
            s = _SCALE.search(line)
            if s:
                current = dataclasses.replace(
                    current, share_scale=float(s.group(1)))
            c = _CAPACITY.search(line)
            if c:
                current = dataclasses.replace(
                    current, learned_iops=float(c.group(1)))
            r = _READ.search(line)
            if r:
                current = dataclasses.replace(
                    current, read=(float(r.group(1)), float(r.group(2))))
            b = _BASELINE.search(line)
            if b:
                current = dataclasses.replace(
                    current, baseline_ms=float(b.group(1)))
    close()
    return out


def plan_of(doc, index):
    """The plan ``index`` of the draw a run document was made from."""
    plan = scenarios.draw_plan(doc['seed'], index,
                               short=doc.get('short', False))
    return scenarios.stretched(plan, doc.get('stretch', 1))


def plan_capacity_iops(doc, index):
    """Plan ``index``'s own calibration in ``doc`` (requests/s), None in
    a run from before 2026-12-03, which calibrated once."""
    for p in doc['plans']:
        if p['index'] == index:
            return p.get('capacity_iops')
    return None


def scored_capacity_iops(doc, index):
    """The requests/s the run shared plan ``index``'s needs out of: the
    plan's own calibration, or the run's first where it has none."""
    own = plan_capacity_iops(doc, index)
    return doc['capacity_iops'] if own is None else own


def _with_plans(intervals, doc, indexes=None):
    """``(interval, plan)`` for each interval of a plan ``doc`` holds
    (of ``indexes`` only, if given), each plan drawn once."""
    if indexes is None:
        indexes = {p['index'] for p in doc['plans']}
    drawn = {}
    for iv in intervals:
        if iv.plan not in indexes:
            continue
        if iv.plan not in drawn:
            drawn[iv.plan] = plan_of(doc, iv.plan)
        yield iv, drawn[iv.plan]


def _scored(intervals, doc, overbooked=True):
    """:func:`_with_plans` of the intervals the bench scored and found
    ``overbooked`` or not (``scenarios.counted`` reads the interval's
    ``end_s``)."""
    for iv, plan in _with_plans(intervals, doc):
        if iv.overbooked == overbooked and scenarios.counted(plan, iv):
            yield iv, plan


def _requests_s(iv, plan):
    """The requests/s every guest of ``iv`` completed, at its plan's
    block size."""
    return sum(g.kb_s / plan.guest(name).block_kb
               for name, g in iv.guests.items())


def _fitting(doc, policy):
    """The indexes of the plans of ``doc`` the run judged as fitting for
    ``policy`` (by the floors bar): a plan drawn to fit is judged
    overbooked when a run's calibration finds the store slower than
    its floors in demand."""
    return {p['index'] for p in doc['plans']
            if 'satisfied' in p['targets'].get(policy, {})}


def _labels(runs):
    """The labels of ``[(label, document)]``, each once, in order."""
    return list(collections.OrderedDict.fromkeys(x for x, _ in runs))


# -- compare ---------------------------------------------------------------

def compare(runs, policy='guarantee'):
    """Rows of ``(seed, plan, overbooked, [cell per label])`` over every
    plan any run holds, and a summary per label.

    ``runs``: ``[(label, document)]``; runs under one label (one per
    draw, say) make one column.  A cell is None where no run of its
    label held the plan, else ``{target: met}`` with ``least_share``,
    ``worst_satisfied`` and ``total_vs_none`` beside them.
    """
    labels = _labels(runs)
    keyed, found = {}, {}
    for label, doc in runs:
        for plan in doc['plans']:
            key = (doc['seed'], plan['index'])
            keyed.setdefault(key, plan['overbooked'])
            if policy in plan['results']:
                found[(label,) + key] = plan
    rows = [(seed, index, overbooked,
             [_cell(found[(label, seed, index)], policy)
              if (label, seed, index) in found else None
              for label in labels])
            for (seed, index), overbooked in sorted(keyed.items())]
    summary = [(label, _summary([cells[k] for *_, cells in rows
                                 if cells[k] is not None]))
               for k, label in enumerate(labels)]
    return rows, summary


def _cell(plan, policy):
    r = plan['results'][policy]
    none = plan['results'].get('none')
    cell = dict(plan['targets'].get(policy, {}))
    cell['least_share'] = r.get('overbooked_share_min')
    cell['worst_satisfied'] = r.get('worst_satisfied')
    cell['total_vs_none'] = (r['total_iops_mean'] / none['total_iops_mean']
                             if none and none['total_iops_mean'] > 0
                             and policy != 'none' else None)
    return cell


def _summary(cells):
    out = collections.OrderedDict()
    for key, word in TARGET_WORDS:
        judged = [c[key] for c in cells if key in c]
        if judged:
            out[word] = (sum(judged), len(judged))
    least = [c['least_share'] for c in cells
             if 'overbooked_share' in c and c['least_share'] is not None]
    out['mean least share'] = (sum(least) / len(least)) if least else None
    return out


def compare_table(rows, summary):
    labels = [label for label, _ in summary]
    width = max([14] + [len(x) for x in labels])
    lines = ['%-4s %-4s %-4s ' % ('seed', 'plan', 'ob') + ' '.join(
        '%-*s' % (width, x) for x in labels)]
    for seed, index, overbooked, cells in rows:
        lines.append('%-4d %-4d %-4s ' % (seed, index,
                                          'yes' if overbooked else '-')
                     + ' '.join('%-*s' % (width, _cell_text(c))
                                for c in cells))
    lines.append('')
    for label, s in summary:
        parts = []
        for word, value in s.items():
            if word == 'mean least share':
                if value is not None:
                    parts.append('mean least share %.1f %%' % (value * 100))
            else:
                parts.append('%s %d/%d' % (word, value[0], value[1]))
        lines.append('%s: %s' % (label, ', '.join(parts)))
    return '\n'.join(lines)


@dataclasses.dataclass(frozen=True)
class ShareNoise:
    """How guaranteed guests' overbooked shares move between runs of the
    same plans (:func:`share_noise`)."""
    sd: float             # one run's noise, a share's standard deviation
    bias_sd: float        # spread of the guests' own means beyond it
    mean: float           # the guests' mean share over every run
    plans: tuple          # per plan run twice or more, each guest's
    #                       own mean, shrunk for the noise it keeps
    pairs: int            # guest pairs the noise is read from

    def expected_passes(self, bar=UNDER_SHARE, at=None):
        """Plans a run keeps every guest at ``bar`` of its share on, in
        expectation: each guest's share its own mean (or ``at`` for
        every guest) plus independent normal noise of ``sd``."""
        return sum(_all_over(bar, [at if at is not None else m
                                   for m in means], self.sd)
                   for means in self.plans)


def _all_over(bar, means, sd):
    if sd <= 0:
        return float(all(m >= bar for m in means))
    p = 1.0
    for m in means:
        p *= 1 - statistics.NormalDist(m, sd).cdf(bar)
    return p


def share_noise(runs, policy='guarantee'):
    """How guaranteed guests' overbooked shares move between runs of
    the same plans, as a :class:`ShareNoise`, or None with fewer than
    two guests that two labels both ran.

    ``sd`` is one run's standard deviation, that of the differences of
    every pair of labels over sqrt(2), over every guest of every
    overbooked plan both ran; a guest's own mean is its mean over the
    labels that ran it, and ``bias_sd`` what the spread of those means
    across guests has beyond the noise they keep (``sd`` over the
    square root of the runs).  Give it runs of one controller: what
    moves between them is the testbed's noise, what stays is the
    controller's treatment of each guest.
    """
    labels = _labels(runs)
    values = collections.defaultdict(lambda: collections.defaultdict(dict))
    for label, doc in runs:
        for plan in doc['plans']:
            if policy in plan['results']:
                for v in plan['results'][policy].get('vms', ()):
                    if v.get('overbooked_share') is not None:
                        values[(doc['seed'], plan['index'])][v['name']][
                            label] = v['overbooked_share']
    diffs = []
    plans, guest_means, runs_per_guest = [], [], []
    for key in sorted(values):
        means = []
        for name, by_label in sorted(values[key].items()):
            got = [by_label[x] for x in labels if x in by_label]
            if len(got) < 2:
                continue
            diffs.extend(a - b for i, a in enumerate(got)
                         for b in got[i + 1:])
            means.append(statistics.mean(got))
            runs_per_guest.append(len(got))
        if means:
            plans.append(tuple(means))
            guest_means.extend(means)
    if len(diffs) < 2:
        return None
    sd = statistics.pstdev(diffs) / 2 ** 0.5
    kept = sd ** 2 * statistics.mean(1 / n for n in runs_per_guest)
    bias = max(0.0, statistics.pvariance(guest_means) - kept)
    mean = statistics.mean(guest_means)
    # A guest's mean over a few runs keeps part of their noise: each is
    # shrunk toward the mean by the part of its spread that is the
    # guest's own (the empirical-Bayes estimate of its own share).
    shrink = bias / (bias + kept) if bias + kept > 0 else 0.0
    plans = tuple(tuple(mean + (m - mean) * shrink for m in means)
                  for means in plans)
    return ShareNoise(sd=sd, bias_sd=bias ** 0.5, mean=mean, plans=plans,
                      pairs=len(diffs))


def noise_text(noise):
    """:func:`share_noise` and what it allows, in one line ('' for
    None)."""
    if noise is None:
        return ''
    n = noise
    return ('run to run, a guest\'s overbooked share moves by sd %.1f %% '
            '(%d pairs, %d plans); the guests\' own means spread by sd '
            '%.1f %% beyond that, around %.1f %%; a run keeps every guest '
            'at %.0f %% on %.1f of %d plans expected from their own means, '
            '%.1f with every guest at 100 %%' % (
                n.sd * 100, n.pairs, len(n.plans), n.bias_sd * 100,
                n.mean * 100, UNDER_SHARE * 100, n.expected_passes(),
                len(n.plans), n.expected_passes(at=1.0)))


def _cell_text(cell):
    """'93.1%!' for an overbooked plan (``!``: a target missed),
    'sat 100% x0.98' for one that fits."""
    if cell is None:
        return '.'
    missed = '!' if not all(v for k, v in cell.items()
                            if k in dict(TARGET_WORDS)) else ''
    if 'overbooked_share' in cell:
        return _pct1(cell['least_share']) + missed
    total = cell['total_vs_none']
    return '%s x%s%s' % (_pct1(cell['worst_satisfied']),
                         '-' if total is None else '%.2f' % total, missed)


def _pct1(value):
    return '-' if value is None else '%.1f%%' % (value * 100)


# -- decompose -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class UnderShare:
    """A guaranteed guest short in one scored interval: under
    ``UNDER_SHARE`` of its share in an overbooked one (:func:`decompose`),
    or missing its need on a plan that fits (:func:`missed_needs`; the
    share fields then hold the need)."""
    plan: int
    guest: str
    end_s: float
    block_kb: int
    got_share: float      # got / share
    inflight: float       # q = requests/s x latency
    target_ms: float      # q / share: the latency that makes the share
    latency_ms: float
    cap_share: float      # cap / share, None uncapped
    held: bool            # capped and running at HELD_BY_CAP of the cap


def decompose(intervals, doc, policy='guarantee'):
    """``({block_kb: (count, median cap/share, median got/cap)},
    [UnderShare])`` over the scored overbooked intervals of ``policy``
    (the intervals the bench counts, overbooked by its needs)."""
    ratios = collections.defaultdict(lambda: ([], []))
    under = []
    for iv, plan in _scored(intervals, doc):
        if iv.policy != policy:
            continue
        for name, g in iv.guests.items():
            vm = plan.guest(name)
            if vm.guarantee_kb_s <= 0 or not g.need_kb_s:
                continue
            cap_kb_s = _cap_kb_s(g, vm.block_kb)
            if cap_kb_s:
                cap_share, got_cap = ratios[vm.block_kb]
                cap_share.append(cap_kb_s / g.need_kb_s)
                got_cap.append(g.kb_s / cap_kb_s)
            if g.kb_s / g.need_kb_s < UNDER_SHARE:
                under.append(_under(iv, name, g, vm.block_kb))
    by_block = {kb: (len(cs), statistics.median(cs), statistics.median(gc))
                for kb, (cs, gc) in sorted(ratios.items())}
    return by_block, under


def _under(iv, name, guest, block_kb):
    """The :class:`UnderShare` row of ``guest`` (named ``name``) in
    interval ``iv``, against the need the trace shows for it."""
    cap_kb_s = _cap_kb_s(guest, block_kb)
    inflight = guest.kb_s / block_kb * guest.latency_ms / 1e3
    return UnderShare(
        plan=iv.plan, guest=name, end_s=iv.end_s, block_kb=block_kb,
        got_share=guest.kb_s / guest.need_kb_s, inflight=inflight,
        target_ms=inflight / (guest.need_kb_s / block_kb) * 1e3,
        latency_ms=guest.latency_ms,
        cap_share=cap_kb_s / guest.need_kb_s if cap_kb_s else None,
        held=bool(cap_kb_s) and guest.kb_s >= HELD_BY_CAP * cap_kb_s)


def missed_needs(intervals, doc, policy='guarantee'):
    """``[UnderShare]``: every guaranteed guest that missed its need in
    an interval the bench scored on a plan that fits, as the bench
    judges it (``scenarios.need_met``: 95 % in whole requests), with the
    same figures as :func:`decompose`'s.  An uncapped guest whose
    latency is over ``q / need`` is latency-bound: it has as many
    requests in flight as it sends at once, and only a shorter queue at
    the store would have made its need."""
    fitting = _fitting(doc, policy)
    missed = []
    for iv, plan in _scored(intervals, doc, overbooked=False):
        if iv.policy != policy or iv.plan not in fitting:
            continue
        for name, g in iv.guests.items():
            vm = plan.guest(name)
            if vm.guarantee_kb_s <= 0 or not g.need_kb_s:
                continue
            if not scenarios.need_met(g.kb_s, g.need_kb_s, vm.block_kb,
                                      plan.interval_s):
                missed.append(_under(iv, name, g, vm.block_kb))
    return missed


def interval_totals(intervals, doc, policy='guarantee'):
    """``{plan: [(end_s, requests/s, none's requests/s, guests capped)]}``
    over every interval of each plan that fits and that both ``policy``
    and ``none`` ran (the totals bar counts them all, settling or not):
    where in a plan the requests a policy lost against ``none`` went,
    interval by interval."""
    by_policy = {policy: collections.defaultdict(dict),
                 'none': collections.defaultdict(dict)}
    for iv, plan in _with_plans(intervals, doc, _fitting(doc, policy)):
        if iv.policy not in by_policy:
            continue
        by_policy[iv.policy][iv.plan][round(iv.end_s, 1)] = (
            _requests_s(iv, plan),
            sum(1 for g in iv.guests.values() if g.cap_iops is not None))
    none = by_policy['none']
    return {index: [(end_s, iops, none[index][end_s][0], capped)
                    for end_s, (iops, capped) in sorted(by_end.items())
                    if end_s in none[index]]
            for index, by_end in sorted(by_policy[policy].items())
            if index in none}


@dataclasses.dataclass
class StopTotals:
    """A run's requests/s against ``none``'s over the plans that fit
    and have a guest stopping: in the intervals a guest stopped in
    (the first after each stop, :func:`stop_totals`) and over every
    interval of those plans."""
    plans: int = 0
    stop_intervals: int = 0
    at_stops: float = 0.0        # policy's requests/s, summed
    none_at_stops: float = 0.0
    whole: float = 0.0
    none_whole: float = 0.0

    def add(self, other):
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name)
                    + getattr(other, field.name))


def stop_totals(intervals, doc, policy='guarantee'):
    """The :class:`StopTotals` of one run: where a policy that decides
    once an interval loses what a guest that stops leaves (its caps
    hold through the interval the guest stopped in)."""
    out = StopTotals()
    for index, rows in interval_totals(intervals, doc, policy).items():
        plan = plan_of(doc, index)
        stops = plan.stop_times_s()
        if not stops:
            continue
        out.plans += 1
        for end_s, iops, other, _ in rows:
            out.whole += iops
            out.none_whole += other
            at = types.SimpleNamespace(end_s=end_s)
            if any(scenarios.after_event(plan, t, at, plan.interval_s)
                   for t in stops):
                out.stop_intervals += 1
                out.at_stops += iops
                out.none_at_stops += other
    return out


def stop_totals_table(by_label):
    """``{label: StopTotals}`` as one row each: the ratios to ``none``
    and the requests/s lost against it, summed over the intervals."""
    lines = ['requests/s against none\'s, plans that fit with a guest '
             'stopping (lost: none\'s less the run\'s, summed over the '
             'intervals):',
             'run              plans  stop intervals  in them  whole plans'
             '  lost in them  lost in all']
    for label, t in by_label.items():
        lines.append('%-16s %5d  %14d  %7s  %11s  %12.0f  %11.0f' % (
            label, t.plans, t.stop_intervals,
            _ratio(t.at_stops, t.none_at_stops),
            _ratio(t.whole, t.none_whole),
            t.none_at_stops - t.at_stops, t.none_whole - t.whole))
    return '\n'.join(lines)


def _ratio(mine, theirs):
    return '%.3f' % (mine / theirs) if theirs > 0 else '-'


@dataclasses.dataclass
class Loss:
    """What the intervals run under one kind of decision lost against
    ``none``: requests, net of the ones they gained."""
    intervals: int = 0
    lost: float = 0.0           # requests none completed and policy not
    none: float = 0.0           # requests none completed

    def add(self, other):
        self.intervals += other.intervals
        self.lost += other.lost
        self.none += other.none


def losses(intervals, doc, policy='guarantee', target=None):
    """``{kind: Loss}`` over every interval of each plan that fits, by
    the kind of the decisions in force over it: those made at the end
    of the interval before (a plan's first interval ran before any, as
    'no cap').  With ``target``, the plans at or over ``target`` of
    ``none``'s requests are left out: where the plans under the totals
    bar lost theirs."""
    kinds = in_force(intervals, policy)
    out = collections.defaultdict(Loss)
    for index, rows in interval_totals(intervals, doc, policy).items():
        if target is not None and sum(r[1] for r in rows) >= target * sum(
                r[2] for r in rows):
            continue
        length_s = plan_of(doc, index).interval_s
        for end_s, iops, none_iops, _ in rows:
            out[kinds[(index, end_s)]].add(Loss(
                1, (none_iops - iops) * length_s, none_iops * length_s))
    return dict(out)


def in_force(intervals, policy='guarantee'):
    """``{(plan, end_s): kind}``: for each interval of ``policy`` the
    kind (:func:`interval_kind`) of the decisions in force over it,
    those made at the end of the plan's interval before ('no cap' for
    a plan's first interval, which ran before any)."""
    out = {}
    last = {}
    for iv in sorted((iv for iv in intervals if iv.policy == policy),
                     key=lambda iv: iv.at):
        out[iv.at] = interval_kind(last.get(iv.plan, ()))
        last[iv.plan] = iv.decided
    return out


def losses_table(by_kind, title):
    """``{kind: Loss}`` as rows in :data:`KIND_ORDER`: intervals,
    requests lost (net), their part of all lost, and the policy's
    requests over ``none``'s in those intervals."""
    total = sum(x.lost for x in by_kind.values())
    lines = [title, '%-11s %9s %9s %7s %8s' % (
        'in force', 'intervals', 'lost', 'of all', 'vs none')]
    for kind in KIND_ORDER:
        x = by_kind.get(kind)
        if not x:
            continue
        # Whole requests, whole percent: no '-0' for a rounding.
        lines.append('%-11s %9d %9d %6d%% %8.3f' % (
            kind, x.intervals, round(x.lost),
            round(x.lost / total * 100) if total else 0,
            1 - x.lost / x.none if x.none else 0.0))
    if len(lines) == 2:
        lines.append('(none)')
    else:
        lines.append('%-11s %9d %9d' % (
            'all', sum(x.intervals for x in by_kind.values()),
            round(total)))
    return '\n'.join(lines)


def losses_by_bar(intervals, doc, policy='guarantee',
                  target=scenarios.TARGET_TOTAL_VS_NONE):
    """:func:`losses` over every plan that fits (key False) and over
    those under ``target`` of ``none``'s requests (key True)."""
    return {under: losses(intervals, doc, policy,
                          target if under else None)
            for under in (False, True)}


def add_losses(into, more):
    """Add :func:`losses_by_bar`'s ``more`` into ``into`` (a dict of
    the same shape, empty at first)."""
    for under, by_kind in more.items():
        for kind, loss in by_kind.items():
            into.setdefault(under, {}).setdefault(kind, Loss()).add(loss)


def losses_text(by_bar, target=scenarios.TARGET_TOTAL_VS_NONE):
    """:func:`losses_by_bar`'s two tables."""
    return '%s\n\n%s\n' % (
        losses_table(by_bar.get(False, {}), 'requests lost against none '
                     'by the decision in force, plans that fit:'),
        losses_table(by_bar.get(True, {}), 'the same, plans under the '
                     'totals bar (%.0f %% of none):' % (target * 100)))


# -- paced streams ---------------------------------------------------------

# The bins of a paced process's latency utilisation ``rho`` that
# ``paced_table`` prints: its latency over its period (``procs /
# demand``).  A synchronous process paced by deadlines keeps its pace
# while ``rho`` < 1 and makes ``1 / rho`` of it over 1
# (``testbed/loadgen.c``), which is the controller's latency limit for a
# guest at its depth (``guarantee.depth_latency_s``); the bins are
# finest where a release's latency margin sets it, 0.6-1.
PACED_BINS = (0.0, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2)

# The columns of ``paced_table``: the decisions in force over an
# interval, grouped as the latency margin sees them (a release raises
# the latency of the interval it governs, a cut lowers it).
PACED_GROUPS = (('release', ('release', 'lift')), ('tighten', ('tighten',)),
                ('other', ('floor hold', 'calm hold', 'other hold', 'other',
                           'no cap')))


@dataclasses.dataclass(frozen=True)
class PacedRate:
    """One uncapped guest whose processes are all paced, over one scored
    interval: its per-process latency utilisation ``rho`` (latency x
    demand / processes) and what it did of its demand."""
    rho: float
    got_share: float
    in_force: str         # the kind of the decisions made before it


def paced_rates(intervals, doc, policy='guarantee'):
    """:class:`PacedRate` of every uncapped guest of ``policy``'s scored
    intervals (plans that fit or not) whose processes all run paced:
    how a paced stream's rate follows its latency, by the decisions in
    force over the interval (:func:`in_force`)."""
    kinds = in_force(intervals, policy)
    out = []
    for iv, plan in _with_plans(intervals, doc):
        if iv.policy != policy or not scenarios.counted(plan, iv):
            continue
        streams = plan.streams_at(iv.end_s - plan.interval_s / 2)
        for name, g in iv.guests.items():
            running = streams.get(name, ())
            if (g.cap_iops is not None or not running
                    or any(s.rate_kb_s <= 0 for s in running)):
                continue
            demand_kb_s = sum(s.rate_kb_s for s in running)
            demand_iops = demand_kb_s / plan.guest(name).block_kb
            out.append(PacedRate(
                rho=g.latency_ms / 1e3 * demand_iops / len(running),
                got_share=g.kb_s / demand_kb_s, in_force=kinds[iv.at]))
    return out


def _bin_rows(bins, number):
    """``(low, high, label)`` of each bin whose lower edges are
    ``bins``, the last open-ended (``high`` None), the edges printed
    with ``number`` (a % format)."""
    edges = list(bins) + [None]
    for low, high in zip(edges, edges[1:]):
        label = ((number + '-' + number) % (low, high) if high is not None
                 else (number + '-') % low)
        yield low, high, label


def _in_bin(value, low, high):
    return value >= low and (high is None or value < high)


def paced_table(rates, bins=PACED_BINS):
    """:func:`paced_rates` by ``rho`` bin (rows; the last open-ended)
    and by the decisions in force (:data:`PACED_GROUPS`, columns): how
    many, their mean share of their demand, and how many of them did
    at least 95 % of it."""
    groups = [('all', None)] + list(PACED_GROUPS)
    lines = ['paced uncapped guests, scored intervals: what each did of '
             'its demand by rho = latency x demand / processes, by the '
             'decisions in force (n, mean, at 95 % or more)',
             '%-9s' % 'rho' + ''.join('%22s' % name for name, _ in groups)]
    for low, high, label in _bin_rows(bins, '%.1f'):
        cells = []
        for _, kinds in groups:
            got = [r.got_share for r in rates
                   if _in_bin(r.rho, low, high)
                   and (kinds is None or r.in_force in kinds)]
            cells.append('%22s' % (
                '-' if not got else '%5d %5.3f %4.0f%%' % (
                    len(got), statistics.fmean(got),
                    100 * sum(x >= TARGET_PACED for x in got) / len(got))))
        lines.append('%-9s' % label + ''.join(cells))
    return '\n'.join(lines)


# -- the store's latency against its load --------------------------------

# Bins of the load of the border (what completed over its rate): wide
# where the latency barely moves, narrow towards the border, where it
# rises fastest; the last is open-ended (a congested reading may run
# past the border the controller learned).
QUEUE_BINS = (0.0, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.05)


@dataclasses.dataclass(frozen=True)
class QueueReading:
    """The controller's reading of one interval: what completed over
    its border's rate (``utilisation``) and its latency over the
    border's time per request (``latency_services``)."""
    utilisation: float
    latency_services: float


def border_fraction(doc):
    """The border the run's controller was set to (its JSON's
    ``settings``), else the policy's default."""
    try:
        return float(doc['settings']['controller']['border_fraction'])
    except (KeyError, TypeError, ValueError):
        return guarantee.GuaranteeTunables().border_fraction


def queue_readings(intervals, doc, policy='guarantee'):
    """:class:`QueueReading` of each interval of ``policy``'s run whose
    domain line shows a reading (``read X ms at Y IOPS``) and a learned
    capacity: the border's rate is the border fraction of it, and its
    time per request one over that rate (``guarantee.queue_service_s``
    at the store's own mix)."""
    out = []
    for iv, rate in _at_border_rate(intervals, doc, policy):
        latency_ms, iops = iv.read
        if latency_ms <= 0 or iops <= 0:
            continue
        out.append(QueueReading(iops / rate, latency_ms / 1e3 * rate))
    return out


def _at_border_rate(intervals, doc, policy):
    """``(interval, rate)`` for each interval of ``policy``'s run whose
    domain line shows a reading and a learned capacity, ``rate`` the
    requests/s at which it puts the border (the run's border fraction
    of that capacity)."""
    border = border_fraction(doc)
    for iv in intervals:
        if iv.policy == policy and iv.read and iv.learned_iops:
            rate = border * iv.learned_iops
            if rate > 0:
                yield iv, rate


def _mm1_services(utilisation):
    """M/M/1's latency at ``utilisation``, in service times."""
    return 1 / (1 - utilisation) if utilisation < 1 else math.inf


def _md1_services(utilisation):
    """M/D/1's: the service and ``rho / (2 (1 - rho))`` of waiting."""
    if utilisation >= 1:
        return math.inf
    return 1 + utilisation / (2 * (1 - utilisation))


def queue_table(readings, bins=QUEUE_BINS):
    """:func:`queue_readings` by load bin: how many, the latency's
    quartiles in service times, and M/M/1's and M/D/1's at the bin's
    mean load ('-' at or past the border)."""
    lines = ['the store\'s latency by its load, as the controller read '
             'it: latency over the border\'s time per request, by what '
             'completed over the border\'s rate, against M/M/1 and M/D/1 '
             'at the same load',
             '%-10s %5s %6s %6s %6s %7s %7s' % (
                 'load', 'n', 'p25', 'p50', 'p75', 'M/M/1', 'M/D/1')]
    for low, high, label in _bin_rows(bins, '%.2f'):
        mine = [r for r in readings
                if _in_bin(r.utilisation, low, high)]
        if not mine:
            continue
        xs = [r.latency_services for r in mine]
        u = statistics.fmean(r.utilisation for r in mine)
        lines.append('%-10s %5d %6.2f %6.2f %6.2f %7s %7s' % (
            label, len(xs), scenarios.percentile(xs, 25),
            scenarios.percentile(xs, 50), scenarios.percentile(xs, 75),
            _model_cell(_mm1_services(u)), _model_cell(_md1_services(u))))
    return '\n'.join(lines)


def _model_cell(services):
    return '-' if math.isinf(services) else '%.2f' % services


# A release a latency margin bounded names the part of the room under
# the border it took (``GuaranteePolicy._knee_margin``'s note).
_ROOM_PART = re.compile(r': (\d+) % of the room')


@dataclasses.dataclass(frozen=True)
class BoundRelease:
    """One interval's release that a guest's latency margin bounded:
    the domain's load of its border as the controller read it
    (``utilisation``, as :class:`QueueReading`'s) and the part of the
    room under the border it took (``part``)."""
    utilisation: float
    part: float

    @property
    def room(self):
        """The room under the border, as a part of the border."""
        return max(0.0, 1.0 - self.utilisation)


def bound_releases(intervals, doc, policy='guarantee'):
    """:class:`BoundRelease` of each interval of ``policy``'s run whose
    decisions took a part of the room a latency margin allowed and whose
    domain line shows a reading (the least part, where notes differ)."""
    out = []
    for iv, rate in _at_border_rate(intervals, doc, policy):
        found = (_ROOM_PART.search(line) for line in iv.notes)
        parts = [int(m.group(1)) / 100 for m in found if m]
        if parts and iv.read[1] > 0:
            out.append(BoundRelease(iv.read[1] / rate, min(parts)))
    return out


def bound_releases_table(releases, bins=QUEUE_BINS):
    """:func:`bound_releases` by load bin: how many, and the medians of
    the part of the room taken, of the room, and of the step (the
    two's product, as a part of the border)."""
    lines = ['releases a latency margin bounded, by the load of the '
             'border: the part of the room under it taken, the room and '
             'the step, as parts of the border (medians)',
             '%-10s %5s %6s %6s %6s' % ('load', 'n', 'part', 'room',
                                        'step')]
    for low, high, label in _bin_rows(bins, '%.2f'):
        mine = [r for r in releases if _in_bin(r.utilisation, low, high)]
        if mine:
            lines.append('%-10s %5d %6.2f %6.3f %6.3f' % (
                label, len(mine),
                scenarios.percentile([r.part for r in mine], 50),
                scenarios.percentile([r.room for r in mine], 50),
                scenarios.percentile([r.part * r.room for r in mine], 50)))
    return '\n'.join(lines)


# -- acted -----------------------------------------------------------------

# The intervals after a matching line that ``acted`` reads: a decision
# is in force over the interval after it and, through the queue it
# leaves at the store, felt in the one after that.
ACTED_SPAN = 2


def acted_at(intervals, pattern, policy='guarantee'):
    """``{(plan, end_s)}``: the intervals of ``policy`` (from
    :func:`parse_trace`) under whose line an indented line (a decision,
    the domain line) matches ``pattern`` (a compiled regular
    expression)."""
    return {iv.at for iv in intervals if iv.policy == policy
            and any(pattern.search(line) for line in iv.notes)}


def least_got(iv):
    """The least a guaranteed guest with a need got of it over one
    interval (its share in an overbooked one), None with no such
    guest."""
    got = [g.kb_s / g.need_kb_s for g in iv.guests.values()
           if g.need_kb_s]
    return min(got) if got else None


def after_acts(intervals, doc, acts, policy='guarantee'):
    """``{(plan, end_s): overbooked}``: the intervals of ``policy`` the
    bench scored among the ``ACTED_SPAN`` after each act of ``acts``
    (from :func:`acted_at`), read as overbooked or not."""
    out = {}
    for iv, plan in _with_plans(intervals, doc):
        if iv.policy != policy or not scenarios.counted(plan, iv):
            continue
        index, end_s = iv.at
        span_s = ACTED_SPAN * plan.interval_s + 1e-6
        if any(p == index and 0 < end_s - t <= span_s for p, t in acts):
            out[iv.at] = iv.overbooked
    return out


@dataclasses.dataclass(frozen=True)
class Acted:
    """One run's intervals after a rule acted, and another run's same
    intervals: ``mine`` and ``theirs`` hold each interval's least share
    (:func:`least_got`), in the same order."""
    label: str
    other: str            # None: the run alone
    overbooked: bool
    mine: tuple
    theirs: tuple


def acted(traced, policy='guarantee'):
    """``[Acted]`` over ``[(label, document, intervals, acts)]`` (the
    intervals from :func:`parse_trace`, the acts from :func:`acted_at`):
    per label and kind of interval (overbooked or not), its runs'
    intervals after the acts, alone and against each other label's run
    of the same seed that ran them (runs of several draws under one
    label add up, as in :func:`compare`)."""
    runs = []
    for label, doc, intervals, acts in traced:
        least = {iv.at: least_got(iv) for iv in intervals
                 if iv.policy == policy}
        runs.append((label, doc['seed'], least,
                     after_acts(intervals, doc, acts, policy)))
    sums = collections.OrderedDict()
    for label, seed, least, after in runs:
        for overbooked in (True, False):
            keys = sorted(k for k, ob in after.items()
                          if ob == overbooked and least[k] is not None)
            if not keys:
                continue
            mine, _ = sums.setdefault((label, None, overbooked), ([], []))
            mine.extend(least[k] for k in keys)
            for other, other_seed, theirs, _ in runs:
                if other == label or other_seed != seed:
                    continue
                both = [k for k in keys if theirs.get(k) is not None]
                mine, their = sums.setdefault((label, other, overbooked),
                                              ([], []))
                mine.extend(least[k] for k in both)
                their.extend(theirs[k] for k in both)
    return [Acted(label, other, overbooked, tuple(mine), tuple(theirs))
            for (label, other, overbooked), (mine, theirs) in sums.items()
            if mine]


def acted_table(rows, pattern_text):
    """:func:`acted`'s rows: the intervals, their mean least share and
    how many ran under ``UNDER_SHARE`` of it, in this run and in the
    other's same intervals, and under it in both."""
    bar = UNDER_SHARE
    lines = ['scored intervals within %d after a line matching %r: the '
             'least share (or need) a guaranteed guest got' % (
                 ACTED_SPAN, pattern_text),
             '%-16s %-10s %-16s %4s %8s %6s %8s %6s %6s' % (
                 'run', 'kind', 'against', 'n', 'least', 'under',
                 'theirs', 'under', 'both')]
    for r in rows:
        mine_under = sum(1 for x in r.mine if x < bar)
        cells = ['%-16s %-10s %-16s %4d %8.3f %6d' % (
            r.label, 'overbooked' if r.overbooked else 'fits',
            r.other or '-', len(r.mine), statistics.mean(r.mine),
            mine_under)]
        if r.other:
            cells.append('%8.3f %6d %6d' % (
                statistics.mean(r.theirs),
                sum(1 for x in r.theirs if x < bar),
                sum(1 for a, b in zip(r.mine, r.theirs)
                    if a < bar and b < bar)))
        lines.append(' '.join(cells))
    if len(lines) == 2:
        lines.append('(none)')
    lines.append('(under: intervals under %.0f %%; both: under it in '
                 'both runs)' % (bar * 100))
    return '\n'.join(lines)


# -- falls of the learned capacity -------------------------------------------

# A learned capacity that moved down by less than this part of itself
# is the decay of what was proven and the rounding of one reading, not
# a fall to explain.
FALL_FRACTION = 0.01


@dataclasses.dataclass(frozen=True)
class CapacityStep:
    """One interval of a run, with the learned capacity its trace shows
    after the interval before and after it, and the latency and what
    completed in each of the two."""
    plan: int
    end_s: float
    from_iops: float
    to_iops: float
    latency_before_ms: float
    latency_ms: float
    done_before: float
    done: float


@dataclasses.dataclass(frozen=True)
class Fall(CapacityStep):
    """One interval after which a run's learned capacity fell, with
    the readings of it and of the interval before: the controller's
    own (the domain line's ``read X ms at Y IOPS``: its mean latency
    and what it completed in the cost model's load) where the trace
    has them, ``exact``; else the IOPS-weighted latency of the
    uncapped guests doing I/O (None without any) and the requests/s
    every guest completed."""
    exact: bool = False

    @property
    def latency_ratio(self):
        """The latency over the interval before's, None without both."""
        if not self.latency_before_ms or self.latency_ms is None:
            return None
        return self.latency_ms / self.latency_before_ms

    @property
    def drained(self):
        """Whether the interval reads as a queue that drained partway,
        by the controller's own test (``guarantee.queue_drained``)."""
        return self.latency_ratio is not None and guarantee.queue_drained(
            self.latency_before_ms, self.latency_ms, self.done_before,
            self.done)


def _uncapped_latency_ms(iv, plan):
    weighted = iops_sum = 0.0
    for name, g in iv.guests.items():
        iops = g.kb_s / plan.guest(name).block_kb
        if g.cap_iops is None and iops > 0:
            weighted += iops * g.latency_ms
            iops_sum += iops
    return weighted / iops_sum if iops_sum else None


def capacity_falls(intervals, doc, policy='guarantee'):
    """The :class:`Fall` of each interval of ``policy``'s run after
    which the learned capacity its trace shows fell by more than
    ``FALL_FRACTION``, in order."""
    mine = [iv for iv in intervals if iv.policy == policy]
    out, last = [], None
    for iv, plan in _with_plans(mine, doc):
        if (last is not None and last[0].plan == iv.plan
                and None not in (iv.learned_iops, last[0].learned_iops)
                and iv.learned_iops
                < last[0].learned_iops * (1 - FALL_FRACTION)):
            before, before_plan = last
            if before.read and iv.read:
                readings = (before.read[0], iv.read[0], before.read[1],
                            iv.read[1], True)
            else:
                readings = (_uncapped_latency_ms(before, before_plan),
                            _uncapped_latency_ms(iv, plan),
                            _requests_s(before, before_plan),
                            _requests_s(iv, plan), False)
            out.append(Fall(iv.plan, iv.end_s, before.learned_iops,
                            iv.learned_iops, *readings))
        last = (iv, plan)
    return out


def falls_table(falls):
    drained = sum(f.drained for f in falls)
    lines = ['learned capacity falls: %d, %d on a reading that drained '
             '(latency %.0f %% of the last or less, less completed; '
             '* the uncapped guests\' latency and requests/s, where the '
             'trace shows no reading of the controller\'s)' % (
                 len(falls), drained,
                 (1 - guarantee.RESPONSE_LATENCY_DROP) * 100),
             '%4s %6s %15s %9s %13s' % ('plan', 't', 'IOPS learned',
                                        'latency', 'completed')]
    for f in falls:
        ratio = ('-' if f.latency_ratio is None
                 else 'x%.2f' % f.latency_ratio)
        lines.append('%4d %6.1f %6.1f->%6.1f %9s %5.1f->%5.1f%s%s' % (
            f.plan, f.end_s, f.from_iops, f.to_iops, ratio,
            f.done_before, f.done, '' if f.exact else '*',
            '  drained' if f.drained else ''))
    return '\n'.join(lines)


# -- queues a release began ---------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Onset(CapacityStep):
    """An interval that read congested, after one that did not and
    whose decisions released a cap, with more completed than it: the
    queue a release began (``guarantee._release_onset``), with the
    controller's readings (the domain line's)."""


def _congested(interval, tunables):
    """Whether the domain line's reading is congested by the
    controller's own test at ``tunables`` (``guarantee.congestion_of``)."""
    return bool(guarantee.congestion_of(
        tunables, interval.read[0] / 1e3, (interval.baseline_ms or 0) / 1e3))


def release_onsets(intervals, policy='guarantee',
                   tunables=guarantee.GuaranteeTunables()):
    """The :class:`Onset` of each interval of ``policy``'s run that
    follows a release into a queue, in order; only where the trace has
    the controller's readings (the domain line's ``read``)."""
    mine = [iv for iv in intervals if iv.policy == policy]
    out = []
    for before, iv in zip(mine, mine[1:]):
        if (before.plan != iv.plan or 'release' not in before.decided
                or None in (before.read, iv.read)):
            continue
        if (not _congested(before, tunables) and _congested(iv, tunables)
                and iv.read[1] > before.read[1]):
            out.append(Onset(iv.plan, iv.end_s, before.learned_iops,
                             iv.learned_iops, before.read[0], iv.read[0],
                             before.read[1], iv.read[1]))
    return out


def onsets_table(onsets):
    fell = sum(1 for o in onsets if o.to_iops < o.from_iops
               * (1 - FALL_FRACTION))
    lines = ['queues a release began: %d, the learned capacity fell '
             'after %d (an interval congested after one that released '
             'a cap and was not, with more completed; the trace does '
             'not say whether a raised disk ran at its cap)' % (
                 len(onsets), fell),
             '%4s %6s %15s %15s %13s' % ('plan', 't', 'IOPS learned',
                                         'latency ms', 'completed')]
    for o in onsets:
        lines.append('%4d %6.1f %6.1f->%6.1f %6.1f->%6.1f %5.1f->%5.1f' % (
            o.plan, o.end_s, o.from_iops, o.to_iops, o.latency_before_ms,
            o.latency_ms, o.done_before, o.done))
    return '\n'.join(lines)


# -- what a cap lets through, by the decision that set it ----------------

# A capped guest pushes against its cap when it waits in its own
# throttle queue: its latency over this multiple of every uncapped
# guest's in the same interval (the store's).
PUSHING_LATENCY = 2.0

# How the decision before an interval left a cap: kept by a hold (it
# names no cap), named anew with the same libvirt limits (whole
# requests and bytes a second: ``iotune.same_limits``; the agent sets
# them again only where they were lost, since each set empties QEMU's
# buckets), raised, or cut.
CHANGES = ('kept', 'same limits', 'raised', 'cut')


@dataclasses.dataclass(frozen=True)
class CapPass:
    """One interval of a guest pushing against a cap: how the decision
    before it changed the cap (:data:`CHANGES`) and what the guest
    completed over what the cap lets through (``_tighter_kb_s``)."""
    plan: int
    end_s: float
    guest: str
    change: str
    ratio: float


def _set_caps(iv):
    """``{guest: (IOPS, bytes/s)}`` of the caps the decisions at the end
    of ``iv`` set (those that name their new cap)."""
    out = {}
    for line in iv.notes:
        d = _DECISION.match(line)
        if d:
            out[d.group(1)] = (float(d.group(2)), float(d.group(3)))
    return out


def _change(last, cap):
    """How a decision that names ``cap`` (``(IOPS, bytes/s)``) moved it
    from ``last``: to the same libvirt limits, or raised or cut on the
    axis that moved."""
    if iotune.same_limits(iotune.IoTune(), model.Cap(*last),
                          model.Cap(*cap)):
        return 'same limits'
    moved = 0 if cap[0] != last[0] else 1
    return 'raised' if cap[moved] > last[moved] else 'cut'


def cap_passes(intervals, doc, policy='guarantee'):
    """The :class:`CapPass` of every guest of ``policy``'s run that
    pushed against a cap (``PUSHING_LATENCY``) over an interval whose
    cap, and the one before it, the trace shows exactly: set by a
    decision that names it, or kept (the interval line shows the cap a
    decision left, rounded, and a hold names none)."""
    out, exact = [], {}     # (plan, guest) -> (cap, change) after iv
    for iv, plan in _with_plans([iv for iv in intervals
                                 if iv.policy == policy], doc):
        store_ms = [g.latency_ms for g in iv.guests.values()
                    if g.cap_iops is None and g.kb_s > 0]
        for name, g in iv.guests.items():
            (iops, bytes_sec), change = exact.get((iv.plan, name),
                                                  ((None, None), None))
            if change is None or not store_ms or \
                    g.latency_ms < PUSHING_LATENCY * max(store_ms):
                continue
            out.append(CapPass(iv.plan, iv.end_s, name, change,
                               g.kb_s / _tighter_kb_s(
                                   iops, plan.guest(name).block_kb,
                                   bytes_sec / 1024.0)))
        set_now = _set_caps(iv)
        for name, g in iv.guests.items():
            key, last = (iv.plan, name), exact.get((iv.plan, name))
            if name in set_now and last is not None:
                exact[key] = (set_now[name], _change(last[0], set_now[name]))
            elif name in set_now:
                exact[key] = (set_now[name], None)
            elif last is not None and g.cap_iops == round(last[0][0]):
                exact[key] = (last[0], 'kept')
            else:
                exact.pop(key, None)
    return out


def cap_passes_table(passes):
    lines = ['what a guest pushing against its cap completed over it, by '
             'the decision before (its latency over %.0f x every '
             'uncapped guest\'s):' % PUSHING_LATENCY,
             '%-11s %6s %8s %8s' % ('decision', 'n', 'median', 'mean')]
    for change in CHANGES:
        ratios = [p.ratio for p in passes if p.change == change]
        if ratios:
            lines.append('%-11s %6d %8.3f %8.3f' % (
                change, len(ratios), statistics.median(ratios),
                statistics.mean(ratios)))
    return '\n'.join(lines)


def completed(intervals, doc):
    """``{(plan, policy): mean requests/s}`` the store completed over
    the scored overbooked intervals of each plan and policy traced: set
    against the capacity the bench scores shares by (the plan's
    calibration, :func:`scored_capacity_iops`), what the store delivers
    under the plan's own mix."""
    sums = collections.defaultdict(list)
    for iv, plan in _scored(intervals, doc):
        sums[(iv.plan, iv.policy)].append(_requests_s(iv, plan))
    return {key: sum(v) / len(v) for key, v in sorted(sums.items())}


def completed_table(done, doc):
    """:func:`completed`'s rows, each against the capacity its plan was
    scored by (:func:`scored_capacity_iops`)."""
    lines = ['requests/s completed, scored overbooked intervals, of the '
             'calibrated capacity:']
    for (plan, policy), iops in done.items():
        capacity_iops = scored_capacity_iops(doc, plan)
        lines.append('%4d %-12s %6.1f  %5.1f %% of %.1f' % (
            plan, policy, iops, iops / capacity_iops * 100, capacity_iops))
    return '\n'.join(lines)


def _cap_kb_s(guest, block_kb):
    """What a guest's cap lets through in KB/s, None uncapped: the
    tighter of its IOPS axis at the plan's block size and its bytes
    axis (a guest whose requests QEMU splits, 128 KB into two 64 KB,
    counts two requests each, and then the bytes axis binds)."""
    if guest.cap_iops is None:
        return None
    return _tighter_kb_s(guest.cap_iops, block_kb, guest.cap_kb_s)


def _tighter_kb_s(cap_iops, block_kb, cap_kb_s=None):
    """KB/s a cap of ``cap_iops`` and ``cap_kb_s`` (None: the IOPS axis
    alone) lets through at ``block_kb`` a request: the tighter axis."""
    by_iops = cap_iops * block_kb
    return by_iops if cap_kb_s is None else min(by_iops, cap_kb_s)


def decompose_table(by_block, under):
    lines = ['capped guaranteed guests, scored overbooked intervals:',
             '%8s %6s %10s %10s' % ('block KB', 'n', 'cap/share', 'got/cap')]
    for kb, (n, cap_share, got_cap) in by_block.items():
        lines.append('%8d %6d %10.2f %10.2f' % (kb, n, cap_share, got_cap))
    lines.append('')
    lines.append('guaranteed guests under %.0f %% of their share:'
                 % (UNDER_SHARE * 100))
    lines.extend(_under_lines(under, 'share'))
    return '\n'.join(lines)


def missed_table(missed):
    """:func:`missed_needs`' rows, as :func:`decompose_table` prints its
    own."""
    return '\n'.join(['guaranteed guests that missed their need, scored '
                      'intervals of plans that fit:']
                     + _under_lines(missed, 'need'))


def totals_table(totals, target=scenarios.TARGET_TOTAL_VS_NONE):
    """:func:`interval_totals` of the plans under ``target`` of
    ``none``'s requests over all their intervals: each interval as the
    policy's requests/s over ``none``'s, and the guests capped."""
    lines = ['plans that fit under %.0f %% of none\'s requests, per '
             'interval (t: requests/s vs none, guests capped):'
             % (target * 100)]
    for index, rows in totals.items():
        mine = sum(r[1] for r in rows)
        theirs = sum(r[2] for r in rows)
        if not rows or theirs <= 0 or mine >= target * theirs:
            continue
        cells = ['%.0f:%.2f/%d' % (end_s, iops / other if other > 0
                                   else 0.0, capped)
                 for end_s, iops, other, capped in rows]
        lines.append('%4d  %5.1f %%  %s' % (index, mine / theirs * 100,
                                            '  '.join(cells)))
    if len(lines) == 1:
        lines.append('(none)')
    return '\n'.join(lines)


def decomposed_text(intervals, doc, policy='guarantee'):
    """Every table ``--decompose`` prints for one run: :func:`decompose`,
    :func:`completed`, :func:`missed_needs` and :func:`interval_totals`
    (the plans' calibrated capacities from ``doc``)."""
    return '%s\n\n%s\n\n%s\n\n%s\n' % (
        decompose_table(*decompose(intervals, doc, policy)),
        completed_table(completed(intervals, doc), doc),
        missed_table(missed_needs(intervals, doc, policy)),
        totals_table(interval_totals(intervals, doc, policy)))


def _under_lines(under, what):
    """The rows of guests under their ``what`` (share or need), and the
    count line."""
    lines = ['%4s %-5s %6s %5s %6s %5s %9s %8s %9s %s' % (
        'plan', 'guest', 't', 'KB', what, 'q', 'q/' + what, 'latency',
        'cap/' + what, 'cap')]
    for u in under:
        lines.append('%4d %-5s %6.1f %5d %5.0f%% %5.2f %7.0fms %6.0fms '
                     '%9s %s' % (
                         u.plan, u.guest, u.end_s, u.block_kb,
                         u.got_share * 100, u.inflight, u.target_ms,
                         u.latency_ms,
                         '-' if u.cap_share is None
                         else '%.0f%%' % (u.cap_share * 100),
                         'held' if u.held else
                         'not holding' if u.cap_share else 'uncapped'))
    if not under:
        lines.append('(none)')
    else:
        lines.append(under_summary(under, what))
    return lines


# -- shares against what the store did -------------------------------------
#
# The bench shared the floors out of the capacity it calibrated before
# the plans, with one guest and eight writers, until 2026-12-03.  A plan
# runs three to eight TCG guests on the host's two cores, and the store
# then completes less, with or without control: these score the same
# intervals against that first calibration, the plan's own (every
# guest of the plan writing, the bench's since), and what the store
# did under ``none`` and under the policy.

CAPACITY_BASES = ('calibrated', 'plan', 'none', 'own')


@dataclasses.dataclass(frozen=True)
class CapacityShares:
    """One overbooked plan of one run: its least guaranteed share
    scored against each of ``CAPACITY_BASES``, and those capacities
    (requests/s; None where the run has no such intervals)."""
    plan: int
    capacity_iops: dict    # basis -> requests/s
    least_share: dict      # basis -> least share, None without needs


def capacity_shares(intervals, doc, policy='guarantee'):
    """:class:`CapacityShares` of each overbooked plan ``policy`` ran:
    its scored overbooked intervals' needs (``scenarios.needs_kb_s``)
    again against ``doc['capacity_iops']``, against the plan's own
    calibration (:func:`plan_capacity_iops`), against the requests/s
    ``none`` completed over its own scored overbooked intervals
    (:func:`completed`) and against those ``policy`` completed.  The
    least share against the capacity the run scored the plan by is the
    run's own (``overbooked_share_min``) but for each interval's
    length, taken as the plan's (the trace does not give the measured
    one)."""
    done = completed(intervals, doc)
    scored = collections.defaultdict(list)
    for iv, plan in _scored(intervals, doc):
        if iv.policy == policy:
            scored[iv.plan].append((iv, plan))
    out = []
    for index, rows in sorted(scored.items()):
        capacities = {'calibrated': doc['capacity_iops'],
                      'plan': plan_capacity_iops(doc, index),
                      'none': done.get((index, 'none')),
                      'own': done.get((index, policy))}
        out.append(CapacityShares(index, capacities, {
            basis: None if iops is None else _least_share(rows, iops)
            for basis, iops in capacities.items()}))
    return out


def _least_share(rows, capacity_iops):
    """The least of the guaranteed guests' throughput over their needs,
    summed over ``rows`` (``(interval, plan)``), the needs shared out of
    ``capacity_iops`` as the bench shares them (``summarize``)."""
    got = collections.defaultdict(float)
    need = collections.defaultdict(float)
    for iv, plan in rows:
        span = types.SimpleNamespace(end_s=iv.end_s,
                                     length_s=plan.interval_s)
        needs, _ = scenarios.needs_kb_s(plan, span, capacity_iops)
        for name, kb_s in needs.items():
            if kb_s > 0:
                guest = iv.guests.get(name)
                got[name] += guest.kb_s if guest else 0.0
                need[name] += kb_s
    return min(got[n] / need[n] for n in need) if need else None


def capacity_shares_table(rows):
    """:func:`capacity_shares`' rows, a line a plan, and a line of how
    many plans kept every share at ``TARGET_OVERBOOKED_SHARE`` by each
    basis."""
    lines = ['least share of an overbooked plan, by the capacity shared '
             '(requests/s):',
             '%4s %16s %16s %16s %16s' % ('plan', 'calibrated', "plan's",
                                          "none's", 'its own')]
    for r in rows:
        lines.append('%4d' % r.plan + ''.join(
            ' %16s' % _share_cell(r.least_share[b], r.capacity_iops[b])
            for b in CAPACITY_BASES))
    lines.append(capacity_shares_summary(rows))
    return '\n'.join(lines)


def _share_cell(share, iops):
    if share is None:
        return '-'
    return '%5.1f %% (%5.1f)' % (share * 100, iops)


def capacity_shares_summary(rows):
    """Plans at ``TARGET_OVERBOOKED_SHARE`` of every share and the mean
    least share, by basis, over ``rows`` (of one run or many)."""
    cells = []
    for basis in CAPACITY_BASES:
        least = [r.least_share[basis] for r in rows
                 if r.least_share[basis] is not None]
        if not least:
            cells.append('%s -' % basis)
            continue
        cells.append('%s %d/%d (mean %.1f %%)' % (
            basis, sum(x >= scenarios.TARGET_OVERBOOKED_SHARE
                       for x in least), len(least),
            statistics.mean(least) * 100))
    return 'every share at %.0f %%: %s' % (
        scenarios.TARGET_OVERBOOKED_SHARE * 100, ', '.join(cells))


def under_summary(under, what='share'):
    """One line over guests under their shares (or needs): how many
    were held by their caps, capped but not held, uncapped (and of
    those, how many ran over ``q / what``: latency-bound), and the held
    ones' median cap over ``what``."""
    held = [u.cap_share for u in under if u.held]
    uncapped = [u for u in under if not u.cap_share]
    return ('%d under %.0f %%: %d held by their caps (median cap %.1f %% '
            'of %s), %d capped and not held, %d uncapped (%d over q/%s)'
            % (len(under), UNDER_SHARE * 100, len(held),
               statistics.median(held) * 100 if held else 0.0, what,
               sum(1 for u in under if u.cap_share and not u.held),
               len(uncapped),
               sum(1 for u in uncapped if u.latency_ms > u.target_ms),
               what))
