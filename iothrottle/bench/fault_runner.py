"""Drives ``iothrottle-bench faults`` on the testbed (the shell around
:mod:`iothrottle.bench.faults`).

One testbed (the four seed-000 guests on one nbdkit store) serves every
fault in turn.  For each fault a fresh control plane starts: a MariaDB
database of its own, ``iothrottle-conductor`` (``guarantee`` policy,
guarantees from a tiers file, the store's measured capacity declared)
and one ``iothrottle-compute`` in conductor mode with the balloon loop
on (policy ``none``: it reads every guest's agent each interval and
moves no memory), all over the real RabbitMQ.  The loads start, the
bench waits until VM1 is capped and every floor is met and two
intervals more (what the settled plan moves, the reference of
``throughput_recovered``), injects the fault, clears it, and
observes :data:`~faults.OBSERVE_INTERVALS` more intervals.  Two
threads observe throughout: the throughput on the interval grid (a
read-only collector on its own libvirt connection, as the seed-000
bench measures) and the live caps every :data:`~faults.CAP_POLL_S`.
"""

import dataclasses
import os
import signal
import tempfile
import threading
import time
import uuid as uuidlib

import libvirt

from iothrottle.bench import faults
from iothrottle.bench import runner
from iothrottle.bench import services as services_mod
from iothrottle.compute import connection as connection_mod
from iothrottle import testbed
from iothrottle.testbed import host as host_mod

PREFIX = 'itb-flt-'
HOST = 'flt-a'
# Intervals the control plane gets to cap VM1 and meet every floor
# before a fault is injected; a plan that never settles is reported.
WARM_INTERVALS = 20
# Seconds to wait for the conductor's last casts to reach the agent's
# queue consumer before the agent is stopped (decisions in flight at the
# end of a run are not lost).
DRAIN_S = 5.0


class FaultBench:
    """See the module docstring."""

    def __init__(self, names, out, plan=None, block_layer=None):
        self.names = list(names)
        self.out = out
        self.plan = plan or faults_plan()
        self.run_ = runner.Seed000Run(self.plan, out, prefix=PREFIX,
                                      block_layer=block_layer)
        self.workdir = tempfile.mkdtemp(prefix='iothrottle-faults-')
        self.tb = None
        self.capacity = None

    def run(self, on_row=None):
        """Every fault in turn; returns the rows (dicts)."""
        services_mod.ensure_rabbitmq()
        services_mod.ensure_mariadb()
        # The observers expect some libvirt errors (a domain with no
        # baseline record, libvirtd restarting).
        connection_mod.silence_default_errors()
        rows = []
        with testbed.Testbed(self.run_.guests(), delay_ms=self.plan.delay_ms,
                             prefix=PREFIX,
                             block_layer=self.run_.block_layer) as tb:
            self.tb = tb
            conn = libvirt.open(tb.uri)
            try:
                self.capacity = self.run_.calibrate(tb, conn)
            finally:
                conn.close()
            self.out.write('store capacity measured: %.1f IOPS\n'
                           % self.capacity.max_iops)
            for name in self.names:
                row = Trial(self, faults.BY_NAME[name]).run()
                rows.append(row)
                if on_row is not None:
                    on_row(row)
        return rows


def faults_plan():
    """Seed 000's plan with the burster at full strength from the start
    (the ramp is not what is measured here)."""
    from iothrottle.bench import seed000
    plan = seed000.default_plan(short=True)
    return dataclasses.replace(plan, vms=tuple(
        dataclasses.replace(vm, procs=vm.max_procs) for vm in plan.vms))


class Trial:
    """One fault: its control plane, its observation, its row."""

    def __init__(self, bench, fault):
        self.bench = bench
        self.fault = fault
        self.plan = bench.plan
        self.tb = bench.tb
        self.workdir = os.path.join(bench.workdir, fault.name)
        os.makedirs(self.workdir)
        self.services = services_mod.Services(self.workdir)
        self.database = 'iothrottle_faults_%s' % uuidlib.uuid4().hex[:8]
        self.intervals = []
        self.cap_polls = []
        self.stop = threading.Event()
        self.clock_start_s = time.monotonic()
        self.names = {self.tb.instance_uuid(vm.name): vm.name
                      for vm in self.plan.vms}
        self.observer_errors = []

    def now_s(self):
        return time.monotonic() - self.clock_start_s

    # -- the control plane --------------------------------------------

    def write_confs(self):
        plan = self.plan
        conductor, common = self.services.write_control_plane(
            plan, self.tb, self.bench.capacity,
            services_mod.mariadb_url(self.database), extra='debug = true\n')
        agent = self.services.write_conf(HOST, common + (
            '\n[agent]\nhost = %s\nowned_domains = %s\n\n'
            '[balloon]\nenabled = true\npolicy = none\ninterval_s = %s\n'
            % (HOST, PREFIX, plan.interval_s)))
        return conductor, agent

    def start_control_plane(self):
        services_mod.create_database(self.database)
        conductor, agent = self.write_confs()
        self.services.manage(conductor, 'db', 'sync')
        self.services.conductor(conductor)
        self.services.agent(HOST, agent)
        self.services.start()

    # -- observation --------------------------------------------------

    def observe_throughput(self, conn):
        observer = self.bench.run_.observer(conn, self.bench.capacity)
        observer.step()
        start_s = self.clock_start_s
        for _ in runner.ticks(self.plan.interval_s, 10 ** 6):
            if self.stop.is_set():
                return
            try:
                report = observer.step()
            except libvirt.libvirtError as exc:
                # libvirtd restarting: a gap, not a zero.
                self.observer_errors.append('throughput: %s' % exc)
                continue
            self.intervals.append(self.bench.run_.interval(
                report, self.names, start_s))

    def poll_caps(self, conn):
        while not self.stop.wait(faults.CAP_POLL_S):
            caps = {}
            try:
                for dom in conn.listAllDomains(
                        libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE):
                    name = self.names.get(dom.UUIDString())
                    if name is not None:
                        caps[name] = dom.blockIoTune(
                            'vda', libvirt.VIR_DOMAIN_AFFECT_LIVE).get(
                                'total_iops_sec', 0)
            except libvirt.libvirtError as exc:
                self.observer_errors.append('cap poll: %s' % exc)
                continue
            self.cap_polls.append((self.now_s(), caps))

    def start_observers(self):
        threads = []
        for target in (self.observe_throughput, self.poll_caps):
            conn = connection_mod.Connection(self.tb.uri)
            thread = threading.Thread(target=target, args=(conn,),
                                      daemon=True)
            thread.start()
            threads.append((thread, conn))
        return threads

    def wait_intervals(self, count, until=None):
        """Wait for ``count`` more intervals (or until ``until(interval)``
        holds for the newest one); whether ``until`` held."""
        seen = len(self.intervals)
        while len(self.intervals) < seen + count:
            if self.stop.wait(0.1):
                break
            if until is not None and len(self.intervals) > seen and \
                    until(self.intervals[-1]):
                return True
        return False

    # -- the trial ------------------------------------------------------

    def run(self):
        out = self.bench.out
        out.write('-- fault %s: %s\n' % (self.fault.name, self.fault.what))
        out.flush()
        self.start_control_plane()
        observers, deaths = [], []
        try:
            observers = self.start_observers()
            self.bench.run_.start_loads(self.tb)
            burster = self.plan.vms[0].name
            settled = self.wait_intervals(
                WARM_INTERVALS, until=lambda i: self.capped(burster)
                and faults.floors_met(self.plan, i))
            if not settled:
                out.write('   control plane did not settle in %d intervals;'
                          ' injecting anyway\n' % WARM_INTERVALS)
            # What the settled plan moves, the throughput's reference.
            self.wait_intervals(faults.BEFORE_INTERVALS - 1)
            fault_s = self.now_s()
            clear_s = self.inject(fault_s)
            self.wait_intervals(faults.OBSERVE_INTERVALS + 1)
            deaths = self.deaths()
        finally:
            self.stop.set()
            for thread, conn in observers:
                thread.join(30)
                conn.close()
            self.stop_loads()
            codes = self.stop_control_plane()
            services_mod.drop_database(self.database)
        deaths += ['%s (exit %d at stop)' % (name, code)
                   for name, code in sorted(codes.items()) if code != 0]
        cast, received = faults.count_decisions(
            self.services.services['conductor'].log_tail(None),
            self.services.services[HOST].log_tail(None))
        row = faults.measure(self.fault, self.plan, self.intervals,
                             self.cap_polls, fault_s, clear_s, cast,
                             received, deaths)
        row['logs'] = self.workdir
        row['observer_errors'] = len(self.observer_errors)
        row['fault_s'], row['clear_s'] = round(fault_s, 2), round(clear_s, 2)
        row['series'] = [
            {'end_s': round(i.end_s, 2), 'length_s': round(i.length_s, 2),
             'kb_s': {vm: round(v) for vm, v in sorted(i.kb_s.items())}}
            for i in self.intervals]
        row['caps'] = [[round(t, 1), caps] for t, caps in _changes(
            self.cap_polls)]
        if self.observer_errors:
            self.bench.out.write('   observer: %d error(s), last: %s\n' % (
                len(self.observer_errors), self.observer_errors[-1]))
        return row

    def capped(self, vm_name):
        return bool(self.cap_polls and self.cap_polls[-1][1].get(vm_name))

    def deaths(self):
        found = ['%s (exited)' % name for name in self.services.dead()]
        if not host_mod.libvirtd_pids():
            found.append('libvirtd')
        for vm in self.plan.vms:
            try:
                if not self.tb.domain(vm.name).isActive():
                    found.append('guest %s' % vm.name)
            except libvirt.libvirtError:
                found.append('guest %s' % vm.name)
        return found

    def stop_loads(self):
        for vm in self.plan.vms:
            try:
                self.tb.stop_load(vm.name)
            except Exception as exc:    # a guest the fault left broken
                self.bench.out.write('   stopping %s\'s load: %s\n'
                                     % (vm.name, exc))

    def stop_control_plane(self):
        """Conductor first, then the agent once its queue is drained
        (decisions in flight are delivered, not counted lost)."""
        codes = self.services.stop('conductor')
        queue = self.services.services[HOST].queue
        deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < deadline and \
                services_mod.queue_counts('messages').get(queue, 0):
            self.stop.wait(0.1)
        codes.update(self.services.stop())
        self.services.close()
        return codes

    # -- injection ------------------------------------------------------

    def inject(self, fault_s):
        """Inject the fault now, hold it, clear it; the clearing time."""
        hold_s = faults.hold_s(self.fault, self.plan)
        pause = threading.Event()
        name = self.fault.name
        if name in ('agent-kill', 'conductor-kill'):
            service = self.services.services[
                HOST if name == 'agent-kill' else 'conductor']
            service.kill(signal.SIGKILL)
            pause.wait(hold_s)
            self.services.start(service.name)
        elif name == 'rabbitmq-restart':
            services_mod.rabbitmqctl('stop_app')
            pause.wait(max(0.0, hold_s - (self.now_s() - fault_s)))
            services_mod.rabbitmqctl('start_app')
            services_mod.wait(services_mod.rabbit_answers,
                              services_mod.RABBIT_START_S, 'RabbitMQ')
            self.services.wait_ready()
        elif name == 'mariadb-stop':
            services_mod.stop_mariadb()
            pause.wait(max(0.0, hold_s - (self.now_s() - fault_s)))
            services_mod.ensure_mariadb()
        elif name == 'libvirtd-restart':
            host_mod.restart_libvirtd()
            self.tb.conn = libvirt.open(self.tb.uri)
        elif name == 'guest-restart':
            burster = self.plan.vms[0]
            self.tb.restart(burster.name)
            self.tb.start_load(burster.name, self.bench.run_.load(burster))
        elif name == 'guest-agent-slow':
            neighbour = self.plan.vms[1].name
            self.guest_sh(neighbour, 'kill -STOP $(pidof qemu-ga)')
            pause.wait(hold_s)
            self.guest_sh(neighbour, 'kill -CONT $(pidof qemu-ga)')
        elif name == 'guest-agent-malformed':
            neighbour = self.plan.vms[1].name
            self.guest_sh(neighbour, GARBAGE_MEMINFO)
            pause.wait(hold_s)
            self.guest_sh(neighbour, 'umount /proc/meminfo')
        elif name == 'store-slowdown':
            self.tb.store.slow_down(faults.SLOWDOWN_FACTOR)
            try:
                pause.wait(hold_s)
            finally:
                self.tb.store.slow_down(1.0)
        else:
            raise ValueError('unknown fault %r' % name)
        return self.now_s()

    def guest_sh(self, vm, command):
        rc, output = self.tb.run(vm, command)
        if rc != 0:
            raise RuntimeError('%s: %r exited %d: %s'
                               % (vm, command, rc, ' '.join(output)))


# A /proc/meminfo no kernel writes: an overflowing total, a negative and
# a non-numeric field, bytes that are not text, and no line ending.
GARBAGE_MEMINFO = (
    "printf 'MemTotal: 99999999999999999999999 kB\\nCached: -5 kB\\n"
    "Buffers: nan kB\\n\\377\\376\\000garbage' > /tmp/meminfo.bad && "
    "mount -o bind /tmp/meminfo.bad /proc/meminfo")


def _changes(cap_polls):
    """The polls at which the caps changed (the first one included)."""
    last = None
    for t_s, caps in cap_polls:
        if caps != last:
            yield t_s, caps
            last = caps
