"""Balloon policies: ``cams`` (cache-aware), ``proportional`` and ``none``.

The problem
-----------
With host memory overcommitted, every guest's page cache competes for the
same RAM.  A guest reading randomly over a huge data set (poor locality)
keeps pulling new pages into its cache; a guest re-reading a small hot
set (good locality) would serve most reads from its cache if it kept its
memory.  Left to LRU and proportional ballooning, the memory follows
access *frequency*: the busy, poorly-local guest wins memory its cache
cannot use, the well-local guest loses its hit rate, and total disk reads
go up (seed 004 section 2).  Disk reads are what the I/O guarantees of
``iothrottle.controller`` ration, so memory in the wrong guest costs
everyone I/O.

The model (seed 004 section 3.2)
--------------------------------
Each guest reports its *cache utilization*: read-hit pages / cache pages
over the last interval (writes are ignored: they dirty the cache whatever
its size).  A guest whose cache pages are hit often gains from more
memory; one whose cache pages sit unread loses little by giving some up.
Evening out the utilizations moves memory to where it saves disk reads.

The control loop (policy ``cams``)
----------------------------------
Each interval, over the guests of one host:

1. *Safety first.*  Each guest has a lower bound ``low_mb = max(floor_mb,
   current_mb - usable_mb + margin_mb)`` - its operator floor, and never
   less than what it is using now plus a margin, so a shrink never makes
   it swap or OOM - and an upper bound ``max_mb`` (its flavor memory).
   A guest already below its lower bound (it started using more) gets
   memory back first, from the guest with the lowest utilization that
   has slack above its own lower bound.
2. *CAMS.*  Among guests with a utilization figure, the lowest and the
   highest are compared; if the highest exceeds the lowest by more than
   ``evenness`` (relative), ``step_mb`` moves from the lowest that has
   slack to the highest that has room.  A wrong move is undone by later
   rounds, as the paper notes.  Seed 004 moved N = 64 pages per unit
   time in 2 MB balloon units; 16 MiB per interval does in a minute of
   2 s intervals what the paper's monitor did in many more, smaller
   rounds.
3. The host total never grows: every MiB one guest gains, another
   gives; no change exceeds ``max_step_mb`` per guest per interval.

A guest that lies about its utilization can pull memory only from guests
above their own lower bounds, ``step_mb`` per interval: it can never push
another guest below its floor or into swap.

Worked numbers: two guests of 512 MiB flavor memory, floors 128 MiB,
both at 384 MiB now.  VM1 (hot set) reports 0.60, VM2 (uniform over a
large set) 0.05; VM2 has 200 MiB usable, so its lower bound is
384 - 200 + 32 = 216 MiB.  0.60 > 1.1 x 0.05: 16 MiB moves from VM2 to
VM1 (targets 368 and 400).  After ten intervals VM1 is at 512 (its
flavor memory) and the moves stop.

``proportional`` is seed 004's SMS baseline: memory split in proportion
to each guest's read rate (``total x f_i / sum f``), within the same
bounds and step limit (safety first, as for ``cams``).  ``none`` keeps
every balloon where it is, safety moves included: the uncontrolled
baseline.

Tunables (``[balloon]``)
------------------------
``step_mb``       16   MiB moved per interval by ``cams``
``max_step_mb``   64   largest change of one guest per interval, MiB
``evenness``      0.1  relative spread of utilizations counted as even
``margin_mb``     32   MiB a guest keeps above what it uses
"""

import dataclasses

from iothrottle.balloon import model


@dataclasses.dataclass(frozen=True)
class BalloonTunables:
    step_mb: float = 16.0
    max_step_mb: float = 64.0
    evenness: float = 0.1
    margin_mb: float = 32.0


def tunables_from_conf(conf):
    """:class:`BalloonTunables` from the ``[balloon]`` option group."""
    b = conf.balloon
    return BalloonTunables(step_mb=b.step_mb, max_step_mb=b.max_step_mb,
                           evenness=b.evenness, margin_mb=b.margin_mb)


class _FromConf:

    @classmethod
    def from_conf(cls, conf):
        return cls(tunables_from_conf(conf))


def low_mb(guest, margin_mb):
    """The least a guest may be left with: its floor, and what it uses
    plus a margin (capped at its flavor memory)."""
    in_use_mb = guest.current_mb - guest.usable_mb
    return min(guest.max_mb, max(guest.floor_mb, in_use_mb + margin_mb))


class _Ledger:
    """Targets under construction; every move keeps the host total."""

    def __init__(self, guests, tunables):
        self.t = tunables
        self.guests = {g.instance_uuid: g for g in guests}
        self.target = {g.instance_uuid: g.current_mb for g in guests}
        self.reason = {g.instance_uuid: [] for g in guests}

    def slack(self, uuid):
        g = self.guests[uuid]
        moved = g.current_mb - self.target[uuid]
        return max(0.0, min(self.target[uuid] - low_mb(g, self.t.margin_mb),
                            self.t.max_step_mb - moved))

    def room(self, uuid):
        g = self.guests[uuid]
        moved = self.target[uuid] - g.current_mb
        return max(0.0, min(g.max_mb - self.target[uuid],
                            self.t.max_step_mb - moved))

    def move(self, donor, receiver, mb, why):
        mb = min(mb, self.slack(donor), self.room(receiver))
        if mb <= 0:
            return 0.0
        self.target[donor] -= mb
        self.target[receiver] += mb
        self.reason[donor].append('gives %.0f MiB: %s' % (mb, why))
        self.reason[receiver].append('gets %.0f MiB: %s' % (mb, why))
        return mb

    def targets(self):
        return tuple(model.BalloonTarget(
            instance_uuid=uuid, target_mb=self.target[uuid],
            reason='; '.join(self.reason[uuid]) or 'unchanged')
            for uuid in self.guests)


def _relieve_pressure(ledger, guests):
    """Give guests below their lower bound memory back first."""
    by_util = sorted(guests, key=_util_key)
    for g in guests:
        need = low_mb(g, ledger.t.margin_mb) - ledger.target[g.instance_uuid]
        for donor in by_util:
            if need <= 0:
                break
            if donor.instance_uuid == g.instance_uuid:
                continue
            need -= ledger.move(donor.instance_uuid, g.instance_uuid, need,
                                'below its lower bound (in use + margin)')


def _util_key(guest):
    """Donor order: lowest utilization first, unreported guests last."""
    u = guest.utilization
    return (u is None, u if u is not None else 0.0)


class CamsPolicy(_FromConf):
    """Seed 004's cache-aware memory scheduler; see the module essay."""

    def __init__(self, tunables=BalloonTunables()):
        self.tunables = tunables

    def decide(self, guests):
        ledger = _Ledger(guests, self.tunables)
        _relieve_pressure(ledger, guests)
        reported = [g for g in guests if g.utilization is not None]
        if len(reported) < 2:
            return ledger.targets()
        ranked = sorted(reported, key=lambda g: g.utilization)
        lowest, highest = ranked[0], ranked[-1]
        spread = highest.utilization - lowest.utilization
        if spread <= self.tunables.evenness * highest.utilization:
            return ledger.targets()
        donors = [g for g in ranked if ledger.slack(g.instance_uuid) > 0]
        receivers = [g for g in reversed(ranked)
                     if ledger.room(g.instance_uuid) > 0]
        for donor in donors:
            for receiver in receivers:
                if receiver.utilization <= donor.utilization:
                    break
                why = 'cache utilization %.2f (%s) vs %.2f (%s)' % (
                    donor.utilization, donor.name or donor.instance_uuid,
                    receiver.utilization,
                    receiver.name or receiver.instance_uuid)
                if ledger.move(donor.instance_uuid, receiver.instance_uuid,
                               self.tunables.step_mb, why):
                    return ledger.targets()
        return ledger.targets()


class ProportionalPolicy(_FromConf):
    """Seed 004's SMS baseline: memory follows read frequency."""

    def __init__(self, tunables=BalloonTunables()):
        self.tunables = tunables

    def decide(self, guests):
        ledger = _Ledger(guests, self.tunables)
        _relieve_pressure(ledger, guests)
        total_rate = sum(g.read_rate for g in guests)
        if total_rate <= 0:
            return ledger.targets()
        total_mb = sum(ledger.target.values())
        want = {g.instance_uuid: total_mb * g.read_rate / total_rate
                for g in guests}
        over = sorted(guests, key=lambda g: ledger.target[g.instance_uuid]
                      - want[g.instance_uuid], reverse=True)
        under = list(reversed(over))
        for donor in over:
            for receiver in under:
                surplus = (ledger.target[donor.instance_uuid]
                           - want[donor.instance_uuid])
                deficit = (want[receiver.instance_uuid]
                           - ledger.target[receiver.instance_uuid])
                if surplus <= 0 or deficit <= 0:
                    continue
                ledger.move(donor.instance_uuid, receiver.instance_uuid,
                            min(surplus, deficit),
                            'read rate share %.0f %%' % (
                                100 * receiver.read_rate / total_rate))
        return ledger.targets()


class NoBalloonPolicy(_FromConf):
    """Every balloon stays where it is: the uncontrolled baseline."""

    def __init__(self, tunables=BalloonTunables()):
        self.tunables = tunables

    def decide(self, guests):
        return _Ledger(guests, self.tunables).targets()
