"""Drives ``iothrottle-bench scale`` (the shell around
:mod:`iothrottle.bench.scale`).

Real ``iothrottle-conductor`` processes (``guarantee`` policy,
guarantees from a tiers file, decisions in a MariaDB database of their
own, several of them on the machine's Redis with ``--conductors``) run
over the machine's RabbitMQ.  In this process, one simulated compute
host per ``per_host`` instances is the real agent code -
:class:`iothrottle.compute.agent.Agent` with its lease table, driven by
:class:`iothrottle.rpc.agent.RemoteAgent`, which casts its reports with
:class:`iothrottle.rpc.api.ConductorAPI` (inline, with futurist's
SynchronousExecutor: a round's reports are on the bus when its clock
stops, and 500 hosts need no 500 reporter threads) - whose libvirt
halves are the
plan's synthetic disks and a recording actuator.  The decisions cast to
``iothrottle-compute.<host>`` reach one oslo.messaging RPC server bound
to ``iothrottle-compute.*`` (RabbitMQ's topic exchange matches the
pattern), which hands each cast to its host's agent: one consumer
instead of thousands of queues on a 2-core machine.

Also :func:`agent_cpu`: one host's collection and decision for 100
disks with one ``getAllDomainStats`` call, CPU per interval; libvirt's
test driver has no block statistics, so the connection is a fake that
answers as libvirt does (this measures iothrottle's CPU only).
"""

import os
import tempfile
import threading
import time
import types
import uuid as uuidlib

from iothrottle.bench import scale
from iothrottle.bench import services as services_mod

FLAVOR = 'scale.std'
# Seconds after the last interval for its decisions to come back.
DRAIN_S = 3.0
# The agent measure's one storage domain: 100 disks whose floors (15
# IOPS each) fill half of its 3000 IOPS; disk 0 bursts to 1500 IOPS every
# other interval, past the border, while its neighbours run around their
# floor: the policy has caps to decide and lift.
AGENT_CAPACITY_IOPS = 3000.0
AGENT_FLOOR_IOPS = 15.0
AGENT_BURST_IOPS = 1500.0
# The decisions cast to every simulated host reach one server: RabbitMQ's
# topic exchange matches the routing key iothrottle-compute.<host> to
# the binding iothrottle-compute.* (oslo.messaging binds a topic queue
# with its own name); the queues it declares are deleted after a run.
SINK_TOPIC = 'iothrottle-compute.*'
SINK_SERVER = 'scale-sink'
SINK_QUEUES = (SINK_TOPIC, '%s.%s' % (SINK_TOPIC, SINK_SERVER))
# Ticks per second of /proc's CPU times.
CLK_TCK = os.sysconf('SC_CLK_TCK')


class SimCollector:
    """A host's libvirt half: the plan's samples of this round."""

    def __init__(self, plan, indexes):
        from iothrottle.bench import scale as scale_mod
        self.indexes = indexes
        self.instances = types.MappingProxyType({
            scale_mod.instance_uuid(i): types.SimpleNamespace(
                uuid=scale_mod.instance_uuid(i), domain_id=1, disks=(),
                domain_name='instance-%08x' % i, name='vm-%d' % i,
                flavor=FLAVOR) for i in indexes})
        self.samples = ()

    def collect(self):
        from iothrottle.compute import collector
        return collector.Collection(taken_at_s=0.0, samples=self.samples,
                                    instances=self.instances,
                                    snapshot=None)


class RecordingActuator:
    """A host's libvirt actuator: the caps it would set."""

    def baseline(self, uuid, device):
        from iothrottle.compute import iotune
        return iotune.IoTune()

    def set_cap(self, uuid, device, cap, baseline):
        pass

    def in_force(self, uuid, device, cap, baseline):
        return True

    def restore(self, uuid, device, baseline):
        pass

    def reconcile(self, instances, leased):
        return [], []


class Sink:
    """The endpoint of ``iothrottle-compute.*``: records when each cast
    arrives and hands it to its host's agent endpoint."""

    def __init__(self, endpoints_by_uuid):
        from iothrottle.rpc import api   # oslo_messaging: after setup()
        self.target = api.compute_target()
        self.endpoints_by_uuid = endpoints_by_uuid
        self.receipts = []    # (issued_at, received_at)
        self.floors_casts = 0
        self.watch_casts = 0
        self.lock = threading.Lock()

    def set_memory_floors(self, ctxt, floors):
        """The floors cast to a host ({uuid: MiB}): counted and handed
        to the agent of the first instance they name."""
        with self.lock:
            self.floors_casts += 1
        endpoint = self.endpoints_by_uuid.get(next(iter(floors or {}), None))
        if endpoint is not None:
            endpoint.set_memory_floors(ctxt, floors)

    def watch(self, ctxt, watch):
        """The watch cast to a host: counted and handed to the agent of
        the first disk it names (the simulated hosts do not check:
        their collectors sample once an interval)."""
        with self.lock:
            self.watch_casts += 1
        domains = (watch or {}).get('domains') or [{}]
        disk_id = next(iter(domains[0].get('disks') or ()), '')
        endpoint = self.endpoints_by_uuid.get(disk_id.split('/')[0])
        if endpoint is not None:
            endpoint.watch(ctxt, watch)

    def apply(self, ctxt, decisions):
        from iothrottle.rpc import wire
        received_at = time.time()
        if not decisions:
            return
        with self.lock:
            self.receipts.append((wire.issued_at(decisions[0]),
                                  received_at))
        endpoint = self.endpoints_by_uuid.get(
            decisions[0].get('instance_uuid'))
        if endpoint is not None:
            endpoint.apply(ctxt, decisions)


def proc_sample(pid):
    """(CPU ticks, RSS bytes) of ``pid`` now."""
    with open('/proc/%d/stat' % pid) as f:
        ticks = scale.proc_cpu_ticks(f.read())
    with open('/proc/%d/status' % pid) as f:
        rss = scale.proc_rss_bytes(f.read())
    return ticks, rss


class ScaleRun:
    """One plan against real conductor processes; see the module
    docstring."""

    def __init__(self, plan, out, workdir=None):
        self.plan = plan
        self.out = out
        self.workdir = workdir or tempfile.mkdtemp(prefix='iothrottle-scale-')
        self.suffix = uuidlib.uuid4().hex[:8]
        self.services = services_mod.Services(self.workdir)
        self.database = 'iothrottle_scale_%s' % self.suffix
        self.group = 'iothrottle-scale-%s' % self.suffix

    # -- the control plane --------------------------------------------

    def conductor_conf(self):
        plan = self.plan
        tiers = os.path.join(self.workdir, 'tiers.yaml')
        with open(tiers, 'w') as f:
            f.write('tiers: {}\nflavors:\n  %s: {min_iops: %r}\n'
                    % (FLAVOR, plan.guarantee_iops))
        body = ('[controller]\npolicy = guarantee\ninterval_s = %s\n'
                '[conductor]\nguarantees = file\ntiers_file = %s\n'
                'learn_capacity = false\n'
                '[storage]\ndefault_max_iops = %r\n'
                'default_max_bytes_sec = %r\n'
                '[database]\nconnection = %s\n' % (
                    plan.interval_s, tiers, plan.capacity_iops,
                    plan.capacity_iops * scale.REQUEST_BYTES * 4,
                    services_mod.mariadb_url(self.database)))
        if plan.conductors > 1:
            body += ('[coordination]\nbackend_url = %s\ngroup = %s\n'
                     % (services_mod.REDIS_URL, self.group))
        return self.services.write_conf('conductor', body)

    def start_conductors(self):
        services_mod.ensure_rabbitmq()
        services_mod.ensure_mariadb()
        if self.plan.conductors > 1:
            services_mod.ensure_redis()
        services_mod.create_database(self.database)
        conf_path = self.conductor_conf()
        self.services.manage(conf_path, 'db', 'sync')
        names = ['conductor-%d' % k for k in range(self.plan.conductors)]
        for name in names:
            self.services.conductor(conf_path, name)
        self.services.start(*names)
        if self.plan.conductors > 1:
            services_mod.wait(
                lambda: len(services_mod.group_members(self.group))
                == self.plan.conductors, services_mod.READY_S,
                'the conductors to join %s' % self.group)
        return names

    # -- the simulated hosts ------------------------------------------

    def build_hosts(self, transport):
        import futurist   # after threads.setup() (imports eventlet else)

        from iothrottle.compute import agent as agent_mod
        from iothrottle.rpc import agent as remote_mod
        from iothrottle.rpc import api as rpc_api
        from iothrottle.rpc import reporter as reporter_mod
        plan = self.plan
        conf = agent_conf(plan.interval_s)
        api = rpc_api.ConductorAPI(transport, fanout=plan.conductors > 1)
        hosts, endpoints = [], {}
        for h in range(plan.hosts):
            indexes = range(h * plan.per_host, (h + 1) * plan.per_host)
            collector = SimCollector(plan, indexes)
            agent = agent_mod.Agent(conf, collector, RecordingActuator(),
                                    None, None, None)
            agent.observe()
            remote = remote_mod.RemoteAgent(
                agent, api, scale.host_name(h), plan.interval_s,
                reporter=reporter_mod.Reporter(
                    api.report, futurist.SynchronousExecutor()))
            endpoint = remote_mod.Endpoint(remote)
            for uuid in collector.instances:
                endpoints[uuid] = endpoint
            hosts.append((collector, remote))
        return hosts, endpoints

    def set_samples(self, hosts, round_, saturated):
        from iothrottle.controller import model
        plan = self.plan
        caps = {}
        for collector, remote in hosts:
            for disk_id, cap in remote.agent.leases.caps().items():
                caps[int(disk_id.split('/')[0].rsplit('-', 1)[1], 16)] = \
                    cap.iops or None
        rates = scale.round_rates(plan, round_, saturated, caps)
        for collector, remote in hosts:
            collector.samples = tuple(model.DiskSample(
                instance_uuid=scale.instance_uuid(i), device='vda',
                storage_domain=scale.domain_name(scale.domain_of(plan, i)),
                interval_s=plan.interval_s, write_iops=rates[i][0],
                write_bytes_sec=rates[i][0] * scale.REQUEST_BYTES,
                latency_s=rates[i][1], instance_name='vm-%d' % i,
                flavor=FLAVOR) for i in collector.indexes)

    # -- the run ------------------------------------------------------

    def run(self, on_round=None):
        """Start, drive ``rounds`` intervals, stop; the summary."""
        from iothrottle.rpc import api as rpc_api
        from iothrottle.rpc import threads
        threads.setup()
        from oslo_config import cfg
        plan = self.plan
        try:
            names = self.start_conductors()
            pids = {name: self.services.services[name].proc.pid
                    for name in names}
            transport = rpc_api.get_transport(
                cfg.ConfigOpts(), url=services_mod.RABBIT_URL)
            hosts, endpoints = self.build_hosts(transport)
            sink = Sink(endpoints)
            server = rpc_api.get_server(
                transport, SINK_TOPIC, SINK_SERVER, [sink])
            server.start()
            try:
                rows, usage = self.drive(hosts, sink, pids, on_round)
            finally:
                server.stop()
                server.wait()
                transport.cleanup()
                # The sink's queues outlive it and would collect every
                # decision cast to any host from now on.
                for queue in SINK_QUEUES:
                    services_mod.rabbitmqctl('delete_queue', queue)
            codes = self.services.stop()
        finally:
            self.services.close()
            services_mod.drop_database(self.database)
        conductors = {}
        for name in names:
            rounds = scale.parse_conductor_log(
                self.services.services[name].log_tail(None))
            measured = [rounds[k] for k in sorted(rounds)
                        if k > plan.warmup_rounds]
            conductors[name] = dict(usage[name], rounds=measured)
        summary = scale.summarize(plan, rows, conductors)
        summary['exit_codes'] = codes
        return summary, rows, conductors

    def drive(self, hosts, sink, pids, on_round):
        plan = self.plan
        saturated = scale.saturated_domains(plan)
        usage = {name: {'cpu': [], 'rss': []} for name in pids}
        last = {name: proc_sample(pid) for name, pid in pids.items()}
        rows, last_reports = [], []
        start = time.time()
        last_tick = start
        for round_ in range(plan.rounds):
            tick = start + round_ * plan.interval_s
            time.sleep(max(0.0, tick - time.time()))
            now = time.time()
            for name, pid in pids.items():
                ticks, rss = proc_sample(pid)
                if round_ > plan.warmup_rounds:
                    usage[name]['cpu'].append(scale.cpu_share(
                        last[name][0], ticks, now - last_tick, CLK_TCK))
                    usage[name]['rss'].append(rss)
                last[name] = (ticks, rss)
            last_tick = now
            self.set_samples(hosts, round_, saturated)
            for _, remote in hosts:
                remote.step()
            last_reports.append(time.time())
            if on_round is not None:
                on_round(round_ + 1, plan.rounds,
                         last_reports[-1] - now)
        time.sleep(max(DRAIN_S, plan.interval_s))
        with sink.lock:
            receipts = list(sink.receipts)
        e2e = scale.end_to_end(last_reports, receipts)
        for round_ in range(plan.warmup_rounds + 1, plan.rounds):
            casts = sum(1 for issued, _ in receipts
                        if last_reports[round_] <= issued and (
                            round_ + 1 == plan.rounds
                            or issued < last_reports[round_ + 1]))
            rows.append({'round': round_, 'e2e_s': e2e.get(round_),
                         'reports': plan.hosts * plan.conductors
                         if plan.conductors > 1 else plan.hosts,
                         'casts': casts, 'wall_s': plan.interval_s})
        return rows, usage


def agent_conf(interval_s, policy=None):
    """The options an agent reads, at their defaults but for
    ``[controller] interval_s`` (and ``policy``)."""
    from oslo_config import cfg

    from iothrottle import conf as iothrottle_conf
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf([], project='iothrottle', default_config_files=[])
    conf.set_override('interval_s', interval_s, 'controller')
    if policy is not None:
        conf.set_override('policy', policy, 'controller')
    return conf


def agent_cpu(disks=100, intervals=60):
    """CPU of one host's agent per interval: ``disks`` domains of one
    disk each, one ``getAllDomainStats`` call, the ``guarantee`` policy
    deciding locally (``Agent.step``: collect, decide, apply), and the
    checks between two steps (``Agent.check_idle``, every ``[controller]
    idle_check_s``: one ``getAllDomainStats`` call each); ms of CPU per
    interval (p50, p99, mean, checks included), the collection's share,
    the checks that sampled the host per interval and their mean."""
    from iothrottle.compute import agent as agent_mod
    from iothrottle.compute import capacity as capacity_mod
    from iothrottle.compute import collector as collector_mod
    from iothrottle.controller import policy as policy_mod
    from iothrottle import tiers as tiers_mod
    conn = FakeLibvirt(disks)
    clock = [0.0]
    collector = collector_mod.Collector(conn, host='bench',
                                        device_of=lambda path: 'sda',
                                        clock=lambda: clock[0])
    conf = agent_conf(5.0, policy='guarantee')
    conf.set_override('default_max_iops', AGENT_CAPACITY_IOPS, 'storage')
    tiers = tiers_mod.parse_tiers('tiers: {}\nflavors: {%s: {min_iops: '
                                  '%r}}\n' % (FLAVOR, AGENT_FLOOR_IOPS))
    agent = agent_mod.Agent(conf, collector, RecordingActuator(),
                            policy_mod.load_policy(conf), tiers,
                            capacity_mod.CapacityTable.from_conf(conf))
    cpu_ms, collect_ms = [], []
    collect = collector.collect

    def timed_collect():
        started = time.process_time()
        collection = collect()
        collect_ms.append((time.process_time() - started) * 1e3)
        return collection
    collector.collect = timed_collect
    agent.step(0.0)
    collect_ms.clear()
    decided, check_ms = 0, []

    def timed(call, at_s):
        started = time.process_time()
        report = call(at_s)
        return report, (time.process_time() - started) * 1e3
    for k in range(1, intervals + 1):
        at_s, spent_ms = 5.0 * (k - 1), 0.0
        for check_at_s in agent_mod.check_times(
                at_s, 5.0 * k, conf.controller.idle_check_s):
            conn.advance(check_at_s - at_s, k)
            at_s = clock[0] = check_at_s
            report, ms = timed(agent.check_idle, at_s)
            if report.samples:   # else no domain wanted one: skipped
                check_ms.append(ms)
            spent_ms += ms
            decided += len(report.decisions)
        conn.advance(5.0 * k - at_s, k)
        clock[0] = 5.0 * k
        report, ms = timed(agent.step, 5.0 * k)
        cpu_ms.append(spent_ms + ms)
        decided += len(report.decisions)
    return {'disks': disks, 'intervals': intervals,
            'samples_per_interval': len(report.samples),
            'checks_per_interval': len(check_ms) / intervals,
            'check_cpu_ms_mean': (sum(check_ms) / len(check_ms)
                                  if check_ms else 0.0),
            'decisions': decided,
            'cpu_ms_p50': scale.percentile(cpu_ms, 0.5),
            'cpu_ms_p99': scale.percentile(cpu_ms, 0.99),
            'cpu_ms_mean': sum(cpu_ms) / len(cpu_ms),
            'collect_cpu_ms_mean': sum(collect_ms) / len(collect_ms),
            'cpu_share_at_5s': sum(cpu_ms) / len(cpu_ms) / 5000.0,
            'fake_libvirt': True}


XML = """<domain><name>instance-%(n)08x</name><uuid>%(uuid)s</uuid>
<metadata><nova:instance
 xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
<nova:name>vm-%(n)d</nova:name><nova:flavor name="%(flavor)s"/>
</nova:instance></metadata>
<devices><disk type='file' device='disk'>
<source file='/var/lib/nova/instances/%(uuid)s/disk'/>
<target dev='vda'/></disk></devices></domain>"""


class FakeDomain:
    def __init__(self, n):
        self.n = n
        self.uuid = scale.instance_uuid(n)
        self.xml = XML % {'n': n, 'uuid': self.uuid, 'flavor': FLAVOR}

    def UUIDString(self):
        return self.uuid

    def name(self):
        return 'instance-%08x' % self.n

    def ID(self):
        return self.n + 1

    def XMLDesc(self, flags):
        return self.xml


class FakeLibvirt:
    """``getAllDomainStats`` of ``disks`` running domains, counters
    growing as a busy disk's do: one bursting domain, the rest steady."""

    def __init__(self, disks):
        self.domains = [FakeDomain(n) for n in range(disks)]
        self.counters = [0] * disks
        self.times_ns = [0] * disks

    def advance(self, interval_s, k):
        bursting = k % 2 == 1
        # The shared queue is long while the burster runs: 60 ms, so
        # that a neighbour at its floor keeps a request in flight (wants
        # more, for the policy), against 2 ms when it does not.
        latency_ns = 60 * 10 ** 6 if bursting else 2 * 10 ** 6
        for n in range(len(self.counters)):
            iops = (AGENT_BURST_IOPS if n == 0 and bursting
                    else AGENT_FLOOR_IOPS - 3 + n % 7)
            requests = int(iops * interval_s)
            self.counters[n] += requests
            self.times_ns[n] += requests * latency_ns

    def getAllDomainStats(self, stats, flags):
        return [(dom, {
            'state.state': 1, 'block.count': 1, 'block.0.name': 'vda',
            'block.0.path': '/var/lib/nova/instances/%s/disk' % dom.uuid,
            'block.0.rd.reqs': 0, 'block.0.rd.bytes': 0,
            'block.0.rd.times': 0,
            'block.0.wr.reqs': self.counters[dom.n],
            'block.0.wr.bytes': self.counters[dom.n] * 4096,
            'block.0.wr.times': self.times_ns[dom.n]})
            for dom in self.domains]
