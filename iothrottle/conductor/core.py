"""The conductor's pure core: reports in, per-host decisions out.

Agents report every interval (see :mod:`iothrottle.rpc.wire`).  A round
takes the newest unused report of every host, maps each disk's reported
storage domain key through the operator's aliases (so disks of several
hosts, or several keys, form one domain), pairs each disk with its
instance's guarantee and the cap its agent holds, and runs the policy
once per domain with that domain's state.  The decisions come back
grouped by the host that owns the disk.  No clock, no I/O: the shell
passes the time in and does the messaging and the database.

With Nova's record of instances (:mod:`iothrottle.conductor.instances`)
a disk counts only when Nova places its instance on the reporting host,
and its guarantee is the one of the instance's own flavor as Nova
recorded it; an unverified disk is left out of its domain entirely (a
spoofed sample must not get a real VM capped).

A round is *due* when every host heard from recently has reported since
the last round, or when the first of the new reports has waited
``wait_s`` (a slow or lost host does not hold the others back).

A round also gives each host the balloon floors (``min_memory_mb``) of
its instances whose guarantee is known, and the disks whose recorded
cap has ended before its lease: the shell tells the core which caps it
cast to which agent (:meth:`Core.cast`), and a disk its host reports
without a cap, in a report of an agent that took that cast in
(``decided_through``) or of another agent process (a restarted agent
starts with no cap), has none in force.  Only a disk admitted from the
reporting host counts (Nova places its instance there), so a host
cannot end another host's caps.

A domain whose decision set or renewed a cap leaves a watch
(:mod:`iothrottle.controller.idle`): each host with a disk of it gets
its own part, so that its agent's checks within the interval hand the
load of a disk that stopped there to the caps at theirs there.

A host whose report says it could not read its disks (``unreadable``:
libvirtd restarting) holds the domains its disks were in at its last
readable report: they are not decided on the others' disks alone, for
at most BLIND_ROUNDS rounds in a window (see there).  So does a host
that is *late*: heard from within ``host_timeout_s`` but not in a
round that ran without it after ``wait_s``, for the domains it shares
with the hosts that did report, from the same budget.  Its load is
missing from those domains' view as a blind host's is, and reads as
room the caps elsewhere would be released into; a host silent past
``host_timeout_s`` is gone, and its domains are decided without it.
"""

import collections
import dataclasses

from iothrottle.controller import cost
from iothrottle.controller import domain as domain_mod
from iothrottle.controller import idle
from iothrottle.controller import model

# Seconds between two warnings about the same host reporting the same
# instance that Nova does not place on it: one line, not one per round.
WARN_EVERY_S = 300.0
# A host name passes to a new agent once its holder has been silent this
# many intervals: a live agent reports every interval (half an interval
# of slack for a late report), so a second live agent with the same name
# never takes it, while an agent restarted after a crash (systemd brings
# it back in seconds) is heard at once instead of after host_timeout_s.
TAKEOVER_INTERVALS = 1.5
# A host or storage domain not heard of for this many intervals is
# forgotten (its agent, its policy state): long past host_timeout_s and
# any report's max age, and it keeps these tables at what reported
# recently, whatever names a host with bus credentials makes up.
FORGET_INTERVALS = 120
# A host that could not read its disks (its report says ``unreadable``:
# libvirtd restarting) keeps the storage domains its disks were in from
# being decided on the other hosts' disks alone - a view without its
# load reads as room, and the caps elsewhere would be released into it -
# for at most this many rounds in any BLIND_WINDOW_INTERVALS intervals.
# A libvirtd restart costs an agent one or two collections (the fault
# matrix: libvirtd back within 1.3-2.1 s); a host trusted only for its
# own instances must not stall the control of the hosts it shares a
# store with for longer.  A held round renews no cap: with leases of at
# least three intervals (the defaults: 30 s, 6 intervals of 5 s) none
# lapses meanwhile.
BLIND_ROUNDS = 2
BLIND_WINDOW_INTERVALS = 30


class WarnEvery:
    """One warning per key every ``period_s`` (a flood must not become
    a log flood).  Keys past their quiet period are forgotten, so the
    table holds at most the keys of the last ``period_s``, whatever names
    the reports make up.  Pure: the caller says what time it is."""

    def __init__(self, period_s):
        self.period_s = period_s
        self.last_s = {}    # key -> time of its last warning

    def due(self, key, now_s):
        """Whether ``key`` may warn at ``now_s`` (recorded if so)."""
        if key in self.last_s and now_s - self.last_s[key] < self.period_s:
            return False
        self.last_s = {k: t for k, t in self.last_s.items()
                       if now_s - t < self.period_s}
        self.last_s[key] = now_s
        return True


def parse_aliases(entries):
    """``{reported key: domain}`` from ``"<key>=<domain>"`` entries.

    Keys contain ``:`` and ``/`` (``nbd+unix:///run/s.sock``), so an
    entry is split at its *last* ``=``.  Raises ValueError naming the
    entry when it is malformed or gives a key twice.
    """
    aliases = {}
    for entry in entries or ():
        key, sep, domain = entry.rpartition('=')
        key, domain = key.strip(), domain.strip()
        if not sep or not key or not domain:
            raise ValueError('[conductor] domain_alias: entry %r must be '
                             '"<reported key>=<storage domain>"' % entry)
        if key in aliases:
            raise ValueError('[conductor] domain_alias: key %r is given '
                             'twice' % key)
        aliases[key] = domain
    return aliases


class DomainMap:
    """Reported storage domain key -> the domain the controller sees."""

    def __init__(self, aliases=None):
        self.aliases = dict(aliases or {})

    def domain_of(self, key):
        return self.aliases.get(key, key)


# A learned peak is a total the domain sustained this many intervals in a
# row: one interval's outlier (a counter glitch, a lying host) cannot
# raise a domain's capacity, and a real peak shows for seconds.
PEAK_HELD_INTERVALS = 3


class Capacities:
    """Declared capacities, else learned peaks, else the default.

    ``declared``: ``{domain: Capacity}`` (config or database);
    ``peaks``: ``{domain: (iops, bytes_sec)}`` observed so far.  With
    ``learn`` a domain without a declared capacity uses its peak once
    both axes have been seen above zero.  The policy's border (e.g. 90 %)
    applies to whichever capacity this returns.

    A peak is one interval's total: of the last ``PEAK_HELD_INTERVALS``
    totals, the one of least load (``cost.load`` against the default),
    so it grows only to a level held that long: a single report of
    ``read_iops=1e7`` (the wire's bound) moves nothing, where it once
    set the domain's capacity for good.  The capacity learned from it
    is the default's shape scaled until the peak fills it
    (:func:`peak_capacity`).  The database is authoritative
    (:meth:`replace_peaks`): an operator's ``iothrottle-manage domain
    reset-capacity`` lowers a running conductor's peak at its next
    refresh.
    """

    def __init__(self, default, declared=None, peaks=None, learn=True):
        self.default = default
        self.declared = dict(declared or {})
        self.peaks = dict(peaks or {})
        self.learn = learn
        self._recent = {}   # domain -> deque of the last totals

    def capacity_of(self, domain):
        if domain in self.declared:
            return self.declared[domain]
        peak = self.peaks.get(domain)
        if self.learn and peak is not None and peak[0] > 0 and peak[1] > 0:
            return peak_capacity(self.default, *peak)
        return self.default

    def observe(self, domain, iops, bytes_sec):
        """Record one interval's total; returns the new peak if it grew
        (to persist), else None."""
        recent = self._recent.get(domain)
        if recent is None:
            recent = self._recent[domain] = collections.deque(
                maxlen=PEAK_HELD_INTERVALS)
        recent.append((iops, bytes_sec))
        if len(recent) < PEAK_HELD_INTERVALS:
            return None
        held = min(recent, key=self._load)
        old = self.peaks.get(domain, (0.0, 0.0))
        if self._load(held) <= self._load(old):
            return None
        self.peaks[domain] = held
        return held

    def _load(self, total):
        """The load of ``(iops, bytes_sec)`` against the default."""
        return cost.load(self.default, *total)

    def replace_peaks(self, peaks):
        """Take ``{domain: (iops, bytes_sec)}`` from the database as the
        peaks (a domain absent or at 0 has none)."""
        self.peaks = {domain: peak for domain, peak in peaks.items()
                      if peak[0] > 0 or peak[1] > 0}


def peak_capacity(shape, peak_iops, peak_bytes_sec):
    """The capacity of ``shape``'s proportions (a Capacity) that a peak
    of ``peak_iops`` and ``peak_bytes_sec`` fills: ``shape`` scaled by
    the load the peak puts on it.

    A peak's requests and bytes are one stream, whose load the cost
    model adds up from both axes; taken as the capacity of each axis,
    the peak read as load 2 against itself (1 + 1), and a domain looked
    saturated at half the throughput it had shown.  Worked numbers:
    the default 7200 rpm disk (200 IOPS, 150 MB/s) and a peak of 95
    requests/s of 16 KB (1.56 MB/s): load 0.475 + 0.010 = 0.485, a
    capacity of 97.1 IOPS and 72.8 MB/s, on which 95 requests/s of
    16 KB are full; the two peaks taken as they are (95 IOPS, 1.56
    MB/s) read the same stream as load 2.0."""
    scale = cost.load(shape, peak_iops, peak_bytes_sec)
    return model.Capacity(max_iops=shape.max_iops * scale,
                          max_bytes_sec=shape.max_bytes_sec * scale)


@dataclasses.dataclass(frozen=True)
class Round:
    """What one decision round decided.

    ``by_host``: ``{host: [(Decision, Guarantee)]}`` to cast;
    ``by_domain``: ``{domain: [Decision]}`` to record; ``peaks``:
    ``{domain: (iops, bytes_sec)}`` that grew (to persist) and
    ``learned`` ``{domain: Capacity}`` the capacities derived from them
    (:func:`peak_capacity`, to show); ``errors``:
    one line each; ``loads``: ``{domain: model.DomainLoad}`` of every
    domain decided (to persist); ``floors``: ``{host: {instance uuid:
    min_memory_mb}}`` of the instances whose guarantee is known (to
    cast); ``lifted``: disk ids whose recorded cap is no longer in force
    (to record); ``agents``: ``{host: agent_id}`` of the reports and
    ``seqs`` ``{host: seq}``; ``watches``: ``{host: {domain:
    idle.HostWatch}}`` of the domains whose decision left its checks a
    watch (to cast, :mod:`iothrottle.controller.idle`).
    """
    now_s: float
    hosts: tuple
    by_host: dict
    by_domain: dict
    peaks: dict
    errors: tuple
    loads: dict = dataclasses.field(default_factory=dict)
    floors: dict = dataclasses.field(default_factory=dict)
    lifted: tuple = ()
    agents: dict = dataclasses.field(default_factory=dict)
    seqs: dict = dataclasses.field(default_factory=dict)
    watches: dict = dataclasses.field(default_factory=dict)
    learned: dict = dataclasses.field(default_factory=dict)


class Core:
    """See the module docstring.

    ``guarantees`` has ``covers(flavor)`` and ``guarantee_for(flavor)``;
    ``capacities`` is a :class:`Capacities`; ``policy`` a controller
    policy.  ``instances`` (an
    :class:`iothrottle.conductor.instances.Directory`, or None) is Nova's
    record of instances: with it a disk is accepted only from the host
    Nova says runs its instance and gets that instance's guarantee
    (``guarantees`` is then unused); without it (testbeds, standalone)
    every reporting host is trusted and the reported flavor name gives
    the guarantee.
    """

    def __init__(self, policy, guarantees, capacities, domain_map=None,
                 interval_s=5.0, wait_s=None, host_timeout_s=None,
                 instances=None):
        self.policy = policy
        self.guarantees = guarantees
        self.instances = instances
        self._placements = {}   # disk_id -> Placement, this round
        self._round_guarantees = {}     # flavor -> guarantee, this round
        self._warnings = WarnEvery(WARN_EVERY_S)   # key (host, uuid)
        self.capacities = capacities
        self.domain_map = domain_map or DomainMap()
        self.interval_s = interval_s
        self.wait_s = interval_s / 2 if wait_s is None else wait_s
        self.host_timeout_s = (3 * interval_s if host_timeout_s is None
                               else host_timeout_s)
        self._pending = {}      # host -> (report, received_at_s)
        self._last_seen = {}    # host -> received_at_s
        self._agents = {}       # host -> (agent_id, last seq, seen_at_s)
        self._states = {}       # domain -> policy state
        self._decided_at = {}   # domain -> now_s of its last round
        self.owners = {}        # disk_id -> host, from the last round
        # Several conductors: owns(domain) says whether this one decides
        # a domain (its samples still give their hosts' floors); None:
        # every domain.
        self.owns = None
        # disk_id -> (agent_id, issued_at, now_s) of the last cap cast
        # on it (loop thread only: decide and cast).
        self._casts = {}
        # host -> the domains its disks were in at its last readable
        # report, and the times of the rounds its blind reports held.
        self._host_domains = {}
        self._blind_rounds = {}

    # -- reports ------------------------------------------------------

    def add_report(self, report, now_s):
        """Take a decoded report (:class:`iothrottle.rpc.wire.Report`);
        returns None, or a one-line reason why it was dropped.

        A report whose sequence number is not newer than the last one of
        its agent is a replay or arrived out of order.  A host name is
        held by one agent (``agent_id``) until that agent has missed a
        report (silent for TAKEOVER_INTERVALS): a second agent configured
        with the same ``[agent] host`` is refused, not mixed in, and an
        agent restarted after a crash takes over as soon as it reports.
        """
        agent = report.agent_id
        holder = self._agents.get(report.host)
        takeover_s = TAKEOVER_INTERVALS * self.interval_s
        if (agent and holder is not None and holder[0] != agent
                and now_s - holder[2] <= takeover_s):
            return ('two agents report as host %s: %s and %s; keeping %s '
                    'until it is silent for %.0f s'
                    % (report.host, holder[0], agent, holder[0],
                       takeover_s))
        if (agent and holder is not None and holder[0] == agent
                and report.seq <= holder[1]):
            return ('report %d of agent %s (host %s) is not newer than %d; '
                    'dropped as replayed or reordered'
                    % (report.seq, agent, report.host, holder[1]))
        if agent:
            self._agents[report.host] = (agent, report.seq, now_s)
        self._pending[report.host] = (report, now_s)
        self._last_seen[report.host] = now_s
        return None

    def live_hosts(self, now_s):
        return sorted(host for host, seen in self._last_seen.items()
                      if now_s - seen <= self.host_timeout_s)

    def due(self, now_s):
        """Whether a round should run now (see the module docstring)."""
        if not self._pending:
            return False
        if set(self.live_hosts(now_s)) <= set(self._pending):
            return True
        first = min(received for _, received in self._pending.values())
        return now_s - first >= self.wait_s

    def next_deadline(self, now_s):
        """Seconds until a pending round is due at the latest; None if
        nothing is pending."""
        if not self._pending:
            return None
        first = min(received for _, received in self._pending.values())
        return max(0.0, first + self.wait_s - now_s)

    # -- one round ----------------------------------------------------

    def take(self):
        """The pending reports, handed over for one round (the shell takes
        them under its lock and decides outside it)."""
        pending, self._pending = self._pending, {}
        return pending

    def decide(self, now_s, pending=None):
        """Run one round over ``pending`` (default: the pending reports,
        taken now); returns a Round.  Only :meth:`take` and
        :meth:`add_report` touch the pending reports, so a round may run
        while reports keep arriving."""
        if pending is None:
            pending = self.take()
        self._forget(now_s)
        errors = []
        held = self._held_domains(pending, now_s, errors)
        host_domains = collections.defaultdict(set)
        owners = {}
        self._placements = {}
        # Guarantees by flavor, looked up once a round (see _resolve).
        self._round_guarantees = {}
        # domain -> [DiskInput]: what the policy takes, built as the
        # samples are admitted, in one pass over the disks (at 10k disks
        # each pass, call and lookup per disk here costs about a
        # millisecond a round).
        by_domain_disks = collections.defaultdict(list)
        disk_input = model.DiskInput
        casts = self._casts
        floors, lifted = {}, []
        owns = self.owns
        aliases = self.domain_map.aliases
        directory = self.instances
        known = self._round_guarantees
        no_guarantee = model.NO_GUARANTEE
        for host in sorted(pending):
            report = pending[host][0]
            report_caps = report.caps
            host_floors = {}
            for sample in report.samples:
                disk_id = sample.disk_id
                # Admission: the domain it joins, Nova's placement (with
                # a directory), one host per disk.
                try:
                    domain = sample.storage_domain
                    if aliases:
                        domain = self.domain_map.domain_of(domain)
                    if directory is not None and \
                            not self._accepted(host, sample, now_s, errors):
                        continue
                except Exception as exc:   # one sample, never the round
                    errors.append('%s: sample of %s ignored: %s'
                                  % (host, disk_id, exc))
                    continue
                if disk_id in owners:
                    errors.append('%s reported by %s and %s; %s ignored'
                                  % (disk_id, owners[disk_id], host, host))
                    continue
                owners[disk_id] = host
                host_domains[host].add(domain)
                guarantee = known.get(sample.flavor, known)
                if guarantee is known or directory is not None:
                    guarantee = self._resolve(sample, errors)
                if owns is None or owns(domain):
                    # A new sample (validated again) only when an alias
                    # renames the key: at 10k disks the copies cost a
                    # third of a round.  A cap that limits neither axis
                    # is no cap (domain.disk_input, inlined).
                    cap = report_caps.get(disk_id)
                    by_domain_disks[domain].append(disk_input(
                        sample if domain == sample.storage_domain else
                        dataclasses.replace(sample, storage_domain=domain),
                        guarantee or no_guarantee,
                        cap if cap is None or cap.limits else None))
                if guarantee is not None:
                    host_floors[sample.instance_uuid] = \
                        guarantee.min_memory_mb
                if disk_id in casts and self._lifted(report, disk_id):
                    lifted.append(disk_id)
            if host_floors:
                floors[host] = host_floors
            if not report.unreadable:
                self._host_domains[host] = frozenset(host_domains[host])
        held |= self._late_domains(pending, now_s, by_domain_disks, errors)
        self.owners = owners
        by_host = collections.defaultdict(list)
        by_domain, peaks, loads, watches, learned = {}, {}, {}, {}, {}
        for domain in sorted(by_domain_disks):
            if domain in held:
                continue
            disks = tuple(by_domain_disks[domain])
            iops = sum(d.sample.iops for d in disks)
            bytes_sec = sum(d.sample.bytes_sec for d in disks)
            peak = self.capacities.observe(domain, iops, bytes_sec)
            if peak is not None:
                peaks[domain] = peak
                learned[domain] = peak_capacity(self.capacities.default,
                                                *peak)
            result = self._decide_domain(domain, disks, now_s, errors)
            if result.decided:
                by_domain[domain] = [d for d, _ in result.decided]
            loads[domain] = self._load(domain, disks, iops, bytes_sec,
                                       result)
            for decision, guarantee in result.decided:
                by_host[owners[decision.disk_id]].append(
                    (decision, guarantee))
            self._watch(domain, disks, owners, result, watches)
        return Round(now_s=now_s, hosts=tuple(sorted(pending)),
                     by_host=dict(by_host), by_domain=by_domain,
                     peaks=peaks, errors=tuple(errors), loads=loads,
                     floors=floors, lifted=tuple(lifted),
                     agents={host: pending[host][0].agent_id
                             for host in pending},
                     seqs={host: pending[host][0].seq for host in pending},
                     watches=watches, learned=learned)

    def _held_domains(self, pending, now_s, errors):
        """The domains not decided this round: those a host of
        ``pending`` that could not read its disks had disks in at its
        last readable report, for at most BLIND_ROUNDS of its rounds in
        a window (see there); the rest are decided on what the others
        report."""
        held = set()
        for host in sorted(pending):
            if pending[host][0].unreadable:
                held |= self._hold_for(
                    host, self._host_domains.get(host, frozenset()), now_s,
                    'could not read its disks', errors)
        return held

    def _late_domains(self, pending, now_s, reported, errors):
        """The domains not decided this round for a late host: one heard
        from within ``host_timeout_s`` that is not in ``pending``, for
        the domains of its last readable report that others report this
        round (``reported``), from the budget of a blind host."""
        held = set()
        for host in self.live_hosts(now_s):
            if host in pending:
                continue
            shared = self._host_domains.get(host, frozenset()).intersection(
                reported)
            held |= self._hold_for(host, shared, now_s,
                                   'has not reported this round', errors)
        return held

    def _hold_for(self, host, domains, now_s, why, errors):
        """``domains`` held for ``host`` (``why`` it cannot speak for
        them), if it has held fewer than BLIND_ROUNDS rounds in the
        window; else none, and the errors say which, once every
        WARN_EVERY_S for a host that stays so (a host whose reports
        always come late would say it every round)."""
        if not domains:
            return frozenset()
        window_s = BLIND_WINDOW_INTERVALS * self.interval_s
        rounds = [t for t in self._blind_rounds.get(host, ())
                  if now_s - t < window_s]
        self._blind_rounds[host] = rounds
        names = ', '.join(sorted(domains))
        if len(rounds) < BLIND_ROUNDS:
            rounds.append(now_s)
            errors.append('%s %s: %s not decided this round (caps keep '
                          'their leases)' % (host, why, names))
            return domains
        if self._warnings.due((host, why), now_s):
            errors.append('%s %s for more than %d rounds in %.0f s: %s '
                          'decided without its disks' % (
                              host, why, BLIND_ROUNDS, window_s, names))
        return frozenset()

    def cast(self, agent_id, decisions, issued_at, now_s):
        """The shell cast ``decisions`` (model.Decision) issued at
        ``issued_at`` (its wall clock) to the agent ``agent_id`` (''
        for an older agent) at ``now_s``: the caps among them end when
        their disks are reported without one (see the module
        docstring)."""
        for decision in decisions:
            if decision.action == model.CAP and agent_id:
                self._casts[decision.disk_id] = (agent_id, issued_at, now_s)
            else:
                self._casts.pop(decision.disk_id, None)

    def _lifted(self, report, disk_id):
        """Whether ``report`` says the cap last cast on ``disk_id`` is
        not in force (forgetting the cast if so)."""
        cast = self._casts.get(disk_id)
        if cast is None:
            return False
        cap = report.caps.get(disk_id)
        if (cap is not None and cap.limits) \
                or not report.agent_id:
            return False
        agent_id, issued_at, _ = cast
        if report.agent_id == agent_id and \
                report.decided_through < issued_at:
            return False     # the cast may not have arrived yet
        del self._casts[disk_id]
        return True

    def _forget(self, now_s):
        """Drop the hosts and storage domains silent for
        FORGET_INTERVALS."""
        forget_s = FORGET_INTERVALS * self.interval_s
        for host, seen_s in list(self._last_seen.items()):
            if now_s - seen_s > forget_s:
                del self._last_seen[host]
                self._agents.pop(host, None)
                self._host_domains.pop(host, None)
                self._blind_rounds.pop(host, None)
        for domain, decided_s in list(self._decided_at.items()):
            if now_s - decided_s > forget_s:
                del self._decided_at[domain]
                self._states.pop(domain, None)
        for disk_id, (_, _, cast_s) in list(self._casts.items()):
            if now_s - cast_s > forget_s:
                del self._casts[disk_id]

    def states(self):
        """``{domain: the policy's state}`` after the last round (what
        the scenario bench's trace reads)."""
        return dict(self._states)

    def forget_domains(self, domains):
        """Start ``domains`` afresh at their next round (several
        conductors: a domain this one decides again after another did
        meanwhile must not resume from its old policy state)."""
        for domain in domains:
            self._states.pop(domain, None)
            self._decided_at.pop(domain, None)

    def _decide_domain(self, domain, disks, now_s, errors):
        result = domain_mod.decide_inputs(
            self.policy, self._states.get(domain), domain,
            self.capacities.capacity_of, disks, now_s)
        self._states[domain] = result.state
        self._decided_at[domain] = now_s
        errors.extend(result.errors)
        return result

    def _watch(self, domain, disks, owners, result, watches):
        """Add to ``watches`` (``{host: {domain: HostWatch}}``) what the
        checks of each host of ``domain`` read, if its decision left a
        watch with a disk yet to stop: the hosts it set or renewed a cap
        on (a host without one has no cap a check could grow)."""
        watch = self.policy.watch(result.state)
        if watch is None or not idle.has_watched(watch):
            return
        capped = {owners[decision.disk_id]
                  for decision, _ in result.decided
                  if decision.action == model.CAP}
        capacity = result.capacity or self.capacities.capacity_of(domain)
        host_of = {d.disk_id: owners[d.disk_id] for d in disks
                   if owners[d.disk_id] in capped}
        for host, host_watch in idle.host_watches(watch, capacity,
                                                  host_of).items():
            watches.setdefault(host, {})[domain] = host_watch

    def _load(self, domain, disks, iops, bytes_sec, result):
        """The DomainLoad of ``domain`` this round: its totals (``iops``,
        ``bytes_sec``), its load and saturation as the policy judged them
        (``result``, a DomainResult), or else against the capacity the
        policy was given, measured and bordered as the policy does
        (:meth:`Policy.load`, :meth:`Policy.saturation_border`: without a
        border, saturated means at full capacity), and its disks
        (DiskInputs: a cap in force that limits nothing is None there)
        under a cap once the round's decisions are applied (a disk not
        decided on keeps the cap its agent holds)."""
        load = result.load
        if load is None:
            load = self.policy.load(self.capacities.capacity_of(domain),
                                    iops, bytes_sec)
        saturated = result.saturated
        if saturated is None:
            border = self.policy.saturation_border()
            saturated = load >= (1.0 if border is None else border)
        capped = {d.disk_id for d in disks if d.cap is not None}
        for decision, _ in result.decided:
            if decision.action == model.CAP and decision.cap is not None \
                    and decision.cap.limits:
                capped.add(decision.disk_id)
            else:
                capped.discard(decision.disk_id)
        return model.DomainLoad(
            iops=iops, bytes_sec=bytes_sec, load=load, saturated=saturated,
            disks=len(disks), caps=len(capped), capacity=result.capacity)

    def _accepted(self, host, sample, now_s, errors):
        """Whether Nova places ``sample``'s instance on ``host`` (always
        without a directory); a refusal is one warning per WARN_EVERY_S
        and (host, instance)."""
        if self.instances is None:
            return True
        _, placement = self.instances.verify(host, sample.instance_uuid)
        if placement is not None and placement.host == host:
            self._placements[sample.disk_id] = placement
            return True
        if self._warnings.due((host, sample.instance_uuid), now_s):
            errors.append(
                '%s reported by %s ignored: Nova places instance %s on %s'
                % (sample.disk_id, host, sample.instance_uuid,
                   placement.host if placement else 'no host known yet'))
        return False

    def _resolve(self, sample, errors):
        """The guarantee of an admitted ``sample``'s instance, or None
        when it is not known (a flavor the guarantees do not cover, or
        cannot read)."""
        if self.instances is not None:
            placement = self._placements.get(sample.disk_id)
            return placement.guarantee if placement else None
        # A flavor is looked up once a round, not once per disk (a
        # resolver's lookup reads its clock twice): every disk of a
        # flavor gets the same answer within a round.  Only an answer
        # is kept (decide reads it); a failure is retried, and logged,
        # for every disk.
        flavor = sample.flavor
        try:
            if self.guarantees.covers(flavor):
                known = self.guarantees.guarantee_for(flavor)
            else:
                known = None
        except Exception as exc:
            errors.append('guarantee of %s (flavor %r): %s'
                          % (sample.instance_uuid, flavor, exc))
            return None
        self._round_guarantees[flavor] = known
        return known
