"""Drives the seed-004 experiment on the testbed (the shell around
:mod:`iothrottle.bench.seed004`).

One testbed per policy: two guests with the plan's flavor memory started
ballooned to ``start_mb``, the balloon loop of the compute agent
(:class:`~iothrottle.compute.balloon_agent.BalloonAgent`, guest reports
through the QEMU guest agent) with the policy under test, on a
collection restricted to the testbed's own domains (other domains of the
host are never ballooned); each guest keeps its disk open for the whole
run (Linux drops a block device's cache on its last close).  Per ratio:
balloons back to the start (waited for), page caches dropped, VM1's hot
files read twice (a warm start), both readers started, ``warm_s`` of
balloon steps, then ``measure_s`` measured: the application's bytes
(the load generator's counters), the host's disk reads (libvirt block
stats), and the guests' swap-out and OOM-kill counters (/proc/vmstat
through the guest agent).
"""

import threading
import time
import types

import libvirt
from oslo_config import cfg

from iothrottle.balloon import cams
from iothrottle.bench import seed004
from iothrottle.compute import balloon_agent
from iothrottle.compute import collector as collector_mod
from iothrottle.compute import guest_agent
from iothrottle.conf import balloon as balloon_conf
from iothrottle import testbed

# The guest agent starts a moment after the serial console is ready.
AGENT_WAIT_S = 30.0
# Margin above what a guest uses.  The testbed guests keep their whole
# root file system (busybox, qemu-ga and its libraries, modules) in RAM,
# which MemAvailable - the balloon's "usable" - does not show as used;
# with the default 32 MiB a guest squeezed by "proportional" to ~90 MiB
# OOM-killed its guest agent.  64 MiB keeps every run OOM-free.
MARGIN_MB = 64.0
# A balloon this close to its target has arrived (the guest's balloon
# driver works in pages; libvirt reports KiB).
BALLOON_SLACK_MB = 4.0
# Longest wait for a balloon to reach its target before a ratio's run.
BALLOON_WAIT_S = 60.0
POLICIES = {'cams': cams.CamsPolicy, 'proportional': cams.ProportionalPolicy,
            'none': cams.NoBalloonPolicy}


def bench_conf(plan, policy):
    conf = cfg.ConfigOpts()
    balloon_conf.register_opts(conf)
    conf([], project='iothrottle', default_config_files=[])
    conf.set_override('policy', policy, 'balloon')
    conf.set_override('interval_s', plan.interval_s, 'balloon')
    conf.set_override('margin_mb', MARGIN_MB, 'balloon')
    return conf


def ticks(interval_s, count):
    """``count`` ticks of a fixed grid; yields the tick time."""
    tick_s = time.monotonic()
    pause = threading.Event()
    for _ in range(count):
        tick_s += interval_s
        # Waiting out the interval is the experiment's clock.
        pause.wait(max(0.0, tick_s - time.monotonic()))
        yield tick_s


def vmstat(tb, vm):
    """The guest's /proc/vmstat, read over the serial console (which
    works even when an OOM kill took the guest agent)."""
    _rc, lines = tb.run(vm, 'cat /proc/vmstat')
    out = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


class Seed004Run:

    def __init__(self, plan, out, prefix='itb-s004-', block_layer=None):
        self.plan = plan
        self.out = out
        self.prefix = prefix
        self.block_layer = block_layer

    def guests(self):
        return [testbed.GuestSpec(
            name=vm.name, flavor='bench.%s' % vm.name, project='bench',
            memory_mb=self.plan.memory_mb,
            current_memory_mb=self.plan.start_mb, disk_mb=vm.disk_mb)
            for vm in self.plan.vms]

    def run(self, policy):
        """The ``{"runs": [...]}`` document of one policy."""
        runs = []
        with testbed.Testbed(self.guests(), delay_ms=self.plan.delay_ms,
                             prefix=self.prefix,
                             block_layer=self.block_layer) as tb:
            conn = libvirt.open(tb.uri)
            try:
                self._wait_agents(tb)
                for vm in self.plan.vms:
                    self._hold_disk_open(tb, vm.name)
                for ratio in self.plan.ratios:
                    runs.append(self.run_ratio(tb, conn, policy, ratio))
            finally:
                conn.close()
        return {'runs': runs}

    def _wait_agents(self, tb):
        deadline = time.monotonic() + AGENT_WAIT_S
        pause = threading.Event()
        for vm in self.plan.vms:
            while True:
                try:
                    guest_agent.ping(tb.domain(vm.name))
                    break
                except guest_agent.GuestAgentError:
                    if time.monotonic() > deadline:
                        raise
                    # qemu-ga connects on its own; nothing to wait on.
                    pause.wait(0.2)

    def loads(self, ratio):
        plan = self.plan
        return [testbed.Load(
            rw='files', block_kb=plan.file_kb,
            size_mb=int(vm.files * plan.file_kb // 1024),
            rate_iops=1000.0 / plan.interval_ms(i, ratio),
            hot_title_pct=vm.hot_title_pct,
            hot_access_pct=vm.hot_access_pct, direct=False)
            for i, vm in enumerate(plan.vms)]

    def _collection(self, collector, uuids):
        """The host collection, restricted to this testbed's domains."""
        c = collector.collect()
        domains = {u: d for u, d in c.snapshot.domains.items()
                   if u in uuids}
        return collector_mod.Collection(
            c.taken_at_s,
            tuple(s for s in c.samples if s.instance_uuid in uuids),
            types.MappingProxyType({u: i for u, i in c.instances.items()
                                    if u in uuids}),
            c.snapshot.__class__(c.snapshot.taken_at_s, domains),
            c.errors, c.duration_s)

    def run_ratio(self, tb, conn, policy_name, ratio):
        plan = self.plan
        names = [vm.name for vm in plan.vms]
        uuids = {tb.instance_uuid(n): n for n in names}
        doms = {n: conn.lookupByName(tb.domain_name(n)) for n in names}
        for n in names:   # same start for every ratio and policy
            doms[n].setMemoryFlags(plan.start_mb * 1024,
                                   libvirt.VIR_DOMAIN_AFFECT_LIVE)
        # A guest gives memory back to its balloon over seconds, taking
        # it from its page cache: warm the cache only once that is done.
        self._settle_balloons(doms, plan.start_mb)
        for n in names:
            tb.run(n, 'echo 3 > /proc/sys/vm/drop_caches')
        first = plan.vms[0]
        for _ in range(2):   # twice: the hot pages start on the active list
            tb.run(first.name, 'dd if=/dev/vda of=/dev/null bs=1M count=%d'
                   % int(plan.hot_mb(first)), timeout=120)
        conf = bench_conf(plan, policy_name)
        agent = balloon_agent.BalloonAgent(
            conf, conn, POLICIES[policy_name].from_conf(conf))
        collector = collector_mod.Collector(conn)
        loads = self.loads(ratio)
        for n, load in zip(names, loads):
            tb.run(n, 'rm -f %s.*' % load.stats_path)
            tb.start_load(n, load)
        report = None
        try:
            warm = int(round(plan.warm_s / plan.interval_s))
            measure = int(round(plan.measure_s / plan.interval_s))
            for i, tick_s in enumerate(ticks(plan.interval_s,
                                             warm + measure)):
                if i == warm:
                    before = self._sample(tb, doms, loads)
                report = agent.step(self._collection(collector, uuids),
                                    tick_s)
                self._live(policy_name, ratio, i, report, uuids)
            after = self._sample(tb, doms, loads)
        finally:
            for n in names:
                tb.stop_load(n)
        targets = {uuids[g.instance_uuid]: g.current_mb
                   for g in report.guests}
        vms = []
        for n in names:
            b, a = before[n], after[n]
            vms.append(seed004.VmResult(
                name=n, app_bytes=a['files'].app_bytes
                - b['files'].app_bytes,
                disk_bytes=a['block'].rd_bytes - b['block'].rd_bytes,
                memory_target_mb=targets.get(n, 0.0),
                swapped=a['pswpout'] > b['pswpout'],
                oom=a['oom_kill'] > b['oom_kill'],
                true_hit_pages=a['files'].hit_pages - b['files'].hit_pages,
                app_pages=a['files'].pages - b['files'].pages))
        for vm in vms:
            self.out.write('%s ratio %d %s: app %.1f MiB, disk %.1f MiB, '
                           'true cache hits %.1f %% of pages read\n' % (
                               policy_name, ratio, vm.name,
                               vm.app_bytes / 2 ** 20,
                               vm.disk_bytes / 2 ** 20,
                               100.0 * vm.true_hit_pages
                               / max(1, vm.app_pages)))
        reqs = sum(after[n]['block'].rd_reqs - before[n]['block'].rd_reqs
                   for n in names)
        seconds = after['_t'] - before['_t']
        return seed004.run_row(ratio, vms, reqs, seconds)

    def _hold_disk_open(self, tb, name):
        """Keep /dev/vda open in the guest for the whole run.  Linux
        drops a block device's page cache when its last opener closes
        it (blkdev_put -> kill_bdev), so without a holder the warm start
        (dd, which closes the device when done) would leave nothing in
        the cache, and the readers' cache would vanish between ratios."""
        rc, out = tb.run(name, 'sleep 2147483647 </dev/vda >/dev/null '
                               '2>&1 &')
        if rc != 0:
            raise RuntimeError('%s: cannot hold /dev/vda open: %s'
                               % (name, ' '.join(out)))

    def _settle_balloons(self, doms, target_mb):
        """Wait until every balloon is within BALLOON_SLACK_MB of
        ``target_mb`` (libvirt's current memory), at most
        BALLOON_WAIT_S."""
        deadline = time.monotonic() + BALLOON_WAIT_S
        pause = threading.Event()
        while any(abs(dom.info()[2] / 1024.0 - target_mb) > BALLOON_SLACK_MB
                  for dom in doms.values()):
            if time.monotonic() > deadline:
                self.out.write('balloons not at %d MiB after %.0f s; going '
                               'on\n' % (target_mb, BALLOON_WAIT_S))
                return
            # The balloon driver moves on its own; nothing to wait on.
            pause.wait(0.2)

    def _sample(self, tb, doms, loads):
        block = tb.block_stats()
        out = {'_t': time.monotonic()}
        for n, load in zip(doms, loads):
            st = vmstat(tb, n)
            out[n] = {'block': block[n], 'files': tb.file_stats(n, load),
                      'pswpout': st.get('pswpout', 0),
                      'oom_kill': st.get('oom_kill', 0)}
        return out

    def _live(self, policy, ratio, i, report, uuids):
        cells = []
        for g in report.guests:
            est = report.estimates.get(g.instance_uuid)
            cells.append('%s %4.0f MiB u=%s' % (
                uuids.get(g.instance_uuid, '?'), g.current_mb,
                '%.3f' % est.utilization if est else '-'))
        self.out.write('%-12s ratio %d t=%3d  %s\n' % (
            policy, ratio, (i + 1) * self.plan.interval_s,
            '  '.join(cells)))
        self.out.flush()
