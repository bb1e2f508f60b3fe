"""``iothrottle-bench scale --core-only``: the conductor's round, here.

The scale plan's reports (its hosts, domains, workload and the caps the
last round decided: :mod:`iothrottle.bench.scale`), encoded and decoded
as the wire does, go straight into a
:class:`iothrottle.conductor.core.Core` with the ``guarantee`` policy,
the plan's one flavor guarantee and its capacity, as the real run's
conductor is configured; each round's ``Core.decide`` - what the
conductor logs as ``decided in X ms`` - is timed in CPU time of this
thread, and its decisions are cast back to the core as the service
does (which also freezes what exists before the first round out of the
garbage collector and collects between rounds: so does this).  No
processes, RPC or database: the number is the round's own work,
without the RPC threads, the database writer and whatever else shares
the machine in a real run, and ``--profile`` (cProfile around
``Core.decide`` only) says where it goes.
"""

import cProfile
import gc
import io
import pstats
import time

from iothrottle.bench import scale
from iothrottle.conductor import core as core_mod
from iothrottle.conductor import guarantees as guarantees_mod
from iothrottle.controller import guarantee as guarantee_mod
from iothrottle.controller import model
from iothrottle.rpc import wire

FLAVOR = 'scale.std'
# Functions a --profile report lists, by own time and by cumulative time.
PROFILE_LINES = 25


def build(plan):
    """The Core a real run's conductor builds from its configuration
    (``guarantees = file`` with one flavor, ``learn_capacity = false``,
    the plan's capacity as ``[storage]`` default)."""
    floor = model.Guarantee(min_iops=plan.guarantee_iops)
    resolver = guarantees_mod.Resolver(
        lambda flavor: floor if flavor == FLAVOR else None)
    capacity = model.Capacity(
        max_iops=plan.capacity_iops,
        max_bytes_sec=plan.capacity_iops * scale.REQUEST_BYTES * 4)
    return core_mod.Core(
        guarantee_mod.GuaranteePolicy(), resolver,
        core_mod.Capacities(capacity, learn=False),
        interval_s=plan.interval_s)


def reports(plan, round_, saturated, caps, decided_through):
    """``{host: decoded Report}`` of round ``round_`` with ``caps``
    ({instance index: Cap}) in force, as the agents would send them."""
    rates = scale.round_rates(plan, round_, saturated,
                              {i: cap.iops for i, cap in caps.items()})
    out = {}
    for h in range(plan.hosts):
        indexes = range(h * plan.per_host, (h + 1) * plan.per_host)
        samples = [model.DiskSample(
            instance_uuid=scale.instance_uuid(i), device='vda',
            storage_domain=scale.domain_name(scale.domain_of(plan, i)),
            interval_s=plan.interval_s, write_iops=rates[i][0],
            write_bytes_sec=rates[i][0] * scale.REQUEST_BYTES,
            latency_s=rates[i][1], instance_name='vm-%d' % i,
            flavor=FLAVOR) for i in indexes]
        held = {'%s/vda' % scale.instance_uuid(i): caps[i]
                for i in indexes if i in caps}
        out[scale.host_name(h)] = wire.decode_report(wire.report(
            scale.host_name(h), plan.interval_s, samples, held,
            agent_id='agent-%d' % h, seq=round_ + 1,
            decided_through=decided_through))
    return out


def run(plan, profile=False):
    """Drive ``plan.rounds`` rounds; a summary of the measured ones
    (after ``plan.warmup_rounds``): CPU ms of ``Core.decide`` per round,
    p50 and p99, microseconds per disk at p50, decisions per round and,
    with ``profile``, the profile's report (text)."""
    core = build(plan)
    saturated = scale.saturated_domains(plan)
    # As the conductor does once it is built (iothrottle.cmd.conductor):
    # what exists now lives on and is no business of the collector.
    gc.collect()
    gc.freeze()
    profiler = cProfile.Profile() if profile else None
    caps, cpu_ms, decisions = {}, [], []
    issued_at = 0.0
    for round_ in range(plan.rounds):
        now_s = 1000.0 + round_ * plan.interval_s
        for host, report in reports(plan, round_, saturated, caps,
                                    issued_at).items():
            core.add_report(report, now_s)
        pending = core.take()
        measured = round_ >= plan.warmup_rounds
        if measured and profiler is not None:
            profiler.enable()
        started = time.thread_time()
        decided = core.decide(now_s, pending)
        spent = time.thread_time() - started
        if measured and profiler is not None:
            profiler.disable()
        if measured:
            cpu_ms.append(spent * 1e3)
            decisions.append(sum(len(pairs)
                                 for pairs in decided.by_host.values()))
        issued_at = now_s
        gc.collect()    # between rounds, as the conductor's loop does
        for host, pairs in decided.by_host.items():
            core.cast(decided.agents[host], [d for d, _ in pairs],
                      issued_at, now_s)
            for decision, _ in pairs:
                index = int(decision.instance_uuid.rsplit('-', 1)[1], 16)
                if decision.action == model.CAP:
                    caps[index] = decision.cap
                else:
                    caps.pop(index, None)
    p50 = scale.percentile(cpu_ms, 0.5)
    summary = {
        'instances': plan.instances, 'domains': plan.domains,
        'rounds_measured': len(cpu_ms), 'decide_cpu_ms': cpu_ms,
        'decide_cpu_ms_p50': p50,
        'decide_cpu_ms_p99': scale.percentile(cpu_ms, 0.99),
        'us_per_disk_p50': p50 * 1e3 / plan.instances,
        'decisions_per_round': sum(decisions) / max(1, len(decisions)),
    }
    gc.unfreeze()
    if profiler is not None:
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats('tottime').print_stats(PROFILE_LINES)
        stats.sort_stats('cumulative').print_stats(PROFILE_LINES)
        summary['profile'] = text.getvalue()
    return summary
