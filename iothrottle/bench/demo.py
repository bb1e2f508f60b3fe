"""``iothrottle-bench demo``: watch a guarantee hold while a VM bursts.

Starts the testbed (four guests on one nbdkit store), measures the
store, writes a tiers file and a config file, and starts the real
``iothrottle-compute --standalone`` service on them.  Then VM1 ramps
from 1 to 10 writer processes while VM2-VM4 keep their paced demands,
and a table refreshes every interval: per VM its demand, guarantee,
throughput (the host's libvirt counters) and the cap the service has
set live (libvirt's ``blockIoTune``).  A summary closes it.
"""

import os
import subprocess
import sys
import tempfile

import libvirt
import yaml

from iothrottle.bench import runner
from iothrottle.bench import seed000
from iothrottle.compute import collector as collector_mod
from iothrottle import testbed


def write_files(workdir, plan, capacity, uri):
    tiers_path = os.path.join(workdir, 'tiers.yaml')
    with open(tiers_path, 'w') as f:
        yaml.safe_dump({'tiers': {}, 'flavors': {
            vm.flavor: {'min_bytes_sec': vm.guarantee_kb_s * 1024}
            for vm in plan.vms}}, f)
    conf_path = os.path.join(workdir, 'iothrottle.conf')
    with open(conf_path, 'w') as f:
        f.write('[compute]\nlibvirt_uri = %s\ntiers_file = %s\n\n'
                '[controller]\npolicy = guarantee\ninterval_s = %s\n'
                'lease_s = %s\n\n[storage]\ndefault_max_iops = %.1f\n'
                'default_max_bytes_sec = %.0f\n' % (
                    uri, tiers_path, plan.interval_s, plan.lease_s,
                    capacity.max_iops, capacity.max_bytes_sec))
    return conf_path


def live_caps(conn, uuid):
    """The live total_iops_sec on the guest's vda (0 = none)."""
    dom = conn.lookupByUUIDString(uuid)
    return dom.blockIoTune('vda', libvirt.VIR_DOMAIN_AFFECT_LIVE).get(
        'total_iops_sec', 0)


def main(out=sys.stdout, ramp_s=10.0, tail_s=30.0):
    plan = seed000.default_plan()
    plan = seed000.Plan(vms=plan.vms, ramp_s=ramp_s, tail_s=tail_s)
    bench = runner.Seed000Run(plan, out, prefix='itb-demo-')
    workdir = tempfile.mkdtemp(prefix='iothrottle-demo-')
    out.write('Starting the testbed: 4 guests on one nbdkit store '
              '(%.0f ms per request)...\n' % plan.delay_ms)
    with testbed.Testbed(bench.guests(), delay_ms=plan.delay_ms,
                         prefix='itb-demo-') as tb:
        conn = libvirt.open(tb.uri)
        capacity = bench.calibrate(tb, conn)
        out.write('Store capacity measured: %.0f IOPS = %.0f KB/s at '
                  '64 KB.\n' % (capacity.max_iops,
                                capacity.max_iops * plan.block_kb))
        conf_path = write_files(workdir, plan, capacity, tb.uri)
        service = subprocess.Popen(
            [sys.executable, '-m', 'iothrottle.cmd.compute', '--standalone',
             '--config-file', conf_path,
             '--log-file', os.path.join(workdir, 'compute.log')])
        out.write('Started iothrottle-compute --standalone (pid %d, log '
                  '%s).\n' % (service.pid, os.path.join(workdir,
                                                        'compute.log')))
        try:
            watch(bench, tb, conn, out)
        finally:
            for vm in plan.vms:
                tb.stop_load(vm.name)
            service.terminate()
            service.wait(timeout=30)
            conn.close()
    return 0


def watch(bench, tb, conn, out):
    plan = bench.plan
    uuids = {vm.name: tb.instance_uuid(vm.name) for vm in plan.vms}
    collector = collector_mod.Collector(conn)
    collector.collect()
    bench.start_loads(tb)
    history = []
    count = int(round(plan.duration_s / plan.interval_s))
    for elapsed_s in runner.ticks(plan.interval_s, count):
        samples = collector.collect().samples
        kb_s = {name: sum(s.bytes_sec for s in samples
                          if s.instance_uuid == uuid) / 1024
                for name, uuid in uuids.items()}
        history.append(kb_s)
        procs = min(plan.vms[0].max_procs,
                    1 + int(elapsed_s // plan.ramp_s))
        out.write('\x1b[2J\x1b[H' if out.isatty() else '\n')
        out.write('t = %5.1f s   VM1 runs %d writer processes\n\n' % (
            elapsed_s, procs))
        out.write('%-4s %10s %10s %12s %10s  %s\n' % (
            'vm', 'demand', 'guarantee', 'throughput', 'cap', ''))
        for vm in plan.vms:
            cap = live_caps(conn, uuids[vm.name])
            need = min(vm.demand_kb_s, vm.guarantee_kb_s)
            got = kb_s[vm.name]
            out.write('%-4s %10s %10.0f %12.0f %10s  %s\n' % (
                vm.name, 'unbounded' if vm.rate_kb_s <= 0
                else '%.0f' % vm.demand_kb_s, vm.guarantee_kb_s, got,
                '%d IOPS' % cap if cap else '-',
                'ok' if got >= 0.95 * need else 'BELOW'))
        out.write('(KB/s; guarantee holds when throughput >= 95 % of '
                  'min(demand, guarantee))\n')
        out.flush()
    summarize(plan, history, out)


def summarize(plan, history, out):
    out.write('\nSummary over %d intervals of %.0f s:\n' % (
        len(history), plan.interval_s))
    for vm in plan.vms:
        series = [h[vm.name] for h in history]
        need = min(vm.demand_kb_s, vm.guarantee_kb_s)
        ok = sum(1 for x in series if x >= 0.95 * need)
        out.write('  %s: mean %.0f KB/s, min %.0f, max %.0f; at or above '
                  'its guarantee in %d of %d intervals\n' % (
                      vm.name, sum(series) / len(series), min(series),
                      max(series), ok, len(series)))
