"""A fluid model of a shared FIFO store, to close the loop in unit tests.

Each VM runs ``streams`` closed-loop synchronous streams, each paced at
``stream_iops`` at most (0 = as fast as it can).  The store serves
``capacity_iops`` requests/s FIFO with a fixed service time.  When the
offered load exceeds the capacity, every request waits behind the
queue, so all uncapped streams see the same latency ``L`` and a stream
gets ``min(pace, 1/L)``: the solver finds the ``L`` at which the store
is exactly full.  A capped VM gets at most its cap, and QEMU counts the
throttle wait in its latency, so its in-flight count is its stream count.
This is the mechanism seed 000 section 3.1 describes (a VM's share of
the queue grows with its parallelism), in a dozen lines.
"""

import dataclasses

from iothrottle.controller import model

REQUEST_BYTES = 65536.0


@dataclasses.dataclass
class FluidVM:
    name: str
    streams: int
    stream_iops: float = 0.0
    guarantee: model.Guarantee = model.NO_GUARANTEE
    cap: model.Cap = None
    cap_expires_s: float = 0.0


def _achieved(vm, latency_s):
    per_stream = 1.0 / latency_s
    if vm.stream_iops > 0:
        per_stream = min(per_stream, vm.stream_iops)
    iops = vm.streams * per_stream
    if vm.cap is not None and vm.cap.iops > 0:
        iops = min(iops, vm.cap.iops)
    return iops


def solve(vms, capacity_iops):
    """Per-VM IOPS and the latency uncapped streams see."""
    service_s = 1.0 / capacity_iops
    lo, hi = service_s, 1e3
    if sum(_achieved(v, lo) for v in vms) <= capacity_iops:
        return [_achieved(v, lo) for v in vms], lo
    for _ in range(100):
        mid = (lo + hi) / 2
        if sum(_achieved(v, mid) for v in vms) > capacity_iops:
            lo = mid
        else:
            hi = mid
    return [_achieved(v, hi) for v in vms], hi


def samples(vms, capacity_iops, interval_s=5.0, domain='store'):
    """DiskInputs for the current caps, as an agent would build them."""
    iops, latency_s = solve(vms, capacity_iops)
    inputs = []
    for vm, x in zip(vms, iops):
        capped = (vm.cap is not None and vm.cap.iops > 0
                  and x >= vm.cap.iops * 0.999)
        # A capped VM's requests wait in QEMU's throttle queue: every
        # stream has one in flight.  Otherwise Little's law at latency L.
        lat = vm.streams / x if capped and x > 0 else latency_s
        inputs.append(model.DiskInput(
            sample=model.DiskSample(
                instance_uuid=vm.name, device='vda', storage_domain=domain,
                interval_s=interval_s, write_iops=x,
                write_bytes_sec=x * REQUEST_BYTES, latency_s=lat,
                instance_name=vm.name),
            guarantee=vm.guarantee, cap=vm.cap))
    return inputs


def apply(vms, decisions, now_s):
    """Apply decisions as leases, as the compute agent does."""
    by_name = {v.name: v for v in vms}
    for d in decisions:
        vm = by_name[d.instance_uuid]
        vm.cap = d.cap if d.action == model.CAP else None
        vm.cap_expires_s = now_s + d.lease_s


def expire(vms, now_s):
    for vm in vms:
        if vm.cap is not None and vm.cap_expires_s <= now_s:
            vm.cap = None


def blend(before, after, fraction):
    """DiskInputs of an interval that ran like ``before`` and, for its
    last ``fraction``, like ``after`` (same disks, the caps of
    ``after``): what an agent reports when load starts part of the way
    into an interval.  Rates add up by time; a latency is the mean over
    the requests completed."""
    out = []
    for a, b in zip(before, after):
        sa, sb = a.sample, b.sample
        iops = (1 - fraction) * sa.iops + fraction * sb.iops
        busy_s = ((1 - fraction) * sa.iops * sa.latency_s
                  + fraction * sb.iops * sb.latency_s)
        out.append(dataclasses.replace(b, sample=dataclasses.replace(
            sb, write_iops=iops, write_bytes_sec=iops * REQUEST_BYTES,
            latency_s=busy_s / iops if iops > 0 else 0.0)))
    return out
