"""Two ``iothrottle-conductor`` processes share the storage domains over
the real Redis (tooz) and RabbitMQ.

Two simulated compute hosts (the real agent and RPC code; fake libvirt
halves, as ``test_conductor_rabbit``) report disks on twelve storage
domains by fanout; both conductors run the ``static`` policy, which caps
every disk every interval, so every interval shows who decides what.
The test checks that each domain is decided by exactly one conductor,
kills the owner of a domain with SIGKILL, sees the survivor take it over
within the membership timeout and a few intervals, starts the killed
conductor again and sees the ring rebalance with no disk going back and
forth between two conductors.
"""

import os
import signal
import tempfile
import threading
import time
import types
import uuid

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.bench import services as services_mod  # noqa: E402
from iothrottle.compute import agent as agent_mod  # noqa: E402
from iothrottle.compute import collector as collector_mod  # noqa: E402
from iothrottle.conductor import ownership  # noqa: E402
from iothrottle.rpc import agent as remote_mod  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from tests.unit.conductor import test_core  # noqa: E402
from tests.unit.conductor import test_service  # noqa: E402

INTERVAL_S = 1.0
LEASE_S = 5.0
MEMBERSHIP_TIMEOUT_S = 2
DOMAINS = ['pool-%02d' % i for i in range(12)]
# The survivor must hold a dead owner's domains within the membership
# timeout, one refresh and a few intervals; a generous bound for a
# loaded 2-core machine.
TAKEOVER_S = MEMBERSHIP_TIMEOUT_S + 8 * INTERVAL_S
DEADLINE_S = 60.0


class Collector:
    """One disk per storage domain on this host."""

    def __init__(self, host):
        self.uuids = {domain: '%s-%s' % (host, domain) for domain in DOMAINS}

    def collect(self):
        instances = {u: types.SimpleNamespace(
            uuid=u, domain_name='d-' + u, name=u, flavor='m1.gold',
            disks=(), domain_id=1) for u in self.uuids.values()}
        return collector_mod.Collection(
            taken_at_s=0.0, snapshot=None, instances=instances,
            samples=tuple(test_core.sample(u, domain, 40.0)
                          for domain, u in self.uuids.items()))


class Handovers:
    """Every admitted owner per disk, in order (wraps the agent's
    fence)."""

    def __init__(self, fence):
        self.fence = fence
        self.owners = {}
        self.lock = threading.Lock()
        admit = fence.admit

        def recording(disk_id, owner, epoch, now_s, hold_s):
            verdict = admit(disk_id, owner, epoch, now_s, hold_s)
            if verdict.admitted:
                with self.lock:
                    history = self.owners.setdefault(disk_id, [])
                    if not history or history[-1] != owner:
                        history.append(owner)
            return verdict
        fence.admit = recording


class TestTwoConductors(testtools.TestCase):

    def setUp(self):
        super().setUp()
        services_mod.ensure_rabbitmq()
        services_mod.ensure_mariadb()
        services_mod.ensure_redis()
        self.useFixture(fixtures.FakeLogger(level=20))
        self.suffix = uuid.uuid4().hex[:8]
        self.group = 'iothrottle-test-%s' % self.suffix
        self.workdir = tempfile.mkdtemp(prefix='iothrottle-tooz-')
        self.services = services_mod.Services(self.workdir)
        self.addCleanup(self.services.close)
        database = 'iothrottle_tooz_%s' % self.suffix
        services_mod.create_database(database)
        self.addCleanup(services_mod.drop_database, database)
        tiers = os.path.join(self.workdir, 'tiers.yaml')
        with open(tiers, 'w') as f:
            f.write('tiers: {gold: {min_iops: 10}}\n'
                    'flavors: {m1.gold: gold}\n')
        self.conf_path = self.services.write_conf('conductor', (
            '[controller]\npolicy = static\ninterval_s = %s\nlease_s = %s\n'
            '[conductor]\nguarantees = file\ntiers_file = %s\n'
            '[database]\nconnection = %s\n'
            '[coordination]\nbackend_url = redis://127.0.0.1:%d?'
            'membership_timeout=%d\ngroup = %s\nrefresh_s = 0.5\n'
            'stale_after_s = %d\n' % (
                INTERVAL_S, LEASE_S, tiers,
                services_mod.mariadb_url(database), services_mod.REDIS_PORT,
                MEMBERSHIP_TIMEOUT_S, self.group, MEMBERSHIP_TIMEOUT_S)))
        self.services.manage(self.conf_path, 'db', 'sync')
        self.conf = test_service.conf_with(interval_s=INTERVAL_S)
        self.transport = rpc_api.get_transport(self.conf,
                                               url=services_mod.RABBIT_URL)
        self.addCleanup(self.transport.cleanup)

    def members(self):
        return services_mod.group_members(
            self.group, 'redis://127.0.0.1:%d' % services_mod.REDIS_PORT)

    def start_conductor(self, name):
        before = self.members()
        service = self.services.conductor(self.conf_path, name)
        service.start()
        services_mod.wait(lambda: len(self.members() - before) == 1
                          or not service.alive(), DEADLINE_S,
                          '%s to join %s' % (name, self.group))
        self.assertTrue(service.alive(), self.services.logs())
        return (self.members() - before).pop()

    def start_agent(self, host):
        actuator = test_service.FakeActuator()
        agent = agent_mod.Agent(self.conf, Collector(host), actuator,
                                None, None, None)
        agent.observe()
        remote = remote_mod.RemoteAgent(
            agent, rpc_api.ConductorAPI(self.transport, fanout=True), host,
            INTERVAL_S)
        handovers = Handovers(remote.fence)
        test_service.serve(self, self.transport, host, remote)
        return remote, handovers

    def owners_now(self, remotes):
        """{domain: {owner of the domain's disks' records}}."""
        owners = {domain: set() for domain in DOMAINS}
        for remote in remotes:
            for domain, disk_uuid in remote.agent.collector.uuids.items():
                record = remote.fence.record(disk_uuid + '/vda')
                owners[domain].add(record.owner if record else None)
        return owners

    def wait_owners(self, remotes, members, what):
        """Until every disk's last decision came from the ring's owner of
        its domain among ``members``."""
        ring = ownership.View(me='', members=frozenset(members), epoch=0)
        want = {domain: {ring.owner_of(domain)} for domain in DOMAINS}
        services_mod.wait(lambda: self.owners_now(remotes) == want,
                          DEADLINE_S, what)
        return want

    def test_domains_split_fail_over_and_rebalance(self):
        a = self.start_conductor('conductor-a')
        b = self.start_conductor('conductor-b')
        remotes, handovers = zip(*(
            self.start_agent('%s-%s' % (host, self.suffix))
            for host in ('h1', 'h2')))
        want = self.wait_owners(remotes, {a, b}, 'each domain decided by '
                                'its ring owner')
        self.assertEqual({a, b}, set().union(*want.values()),
                         'the ring gave every domain to one conductor')
        # Steady: for several intervals every disk keeps one owner.
        deposed = sum(r.deposed for r in remotes)
        before = {d: list(h) for hv in handovers for d, h in
                  hv.owners.items()}
        time.sleep(4 * INTERVAL_S)
        self.assertEqual(want, self.owners_now(remotes))
        self.assertEqual(before, {d: list(h) for hv in handovers
                                  for d, h in hv.owners.items()})
        self.assertEqual(deposed, sum(r.deposed for r in remotes))

        # kill -9 conductor b: a takes every domain over.
        killed_at = time.monotonic()
        self.services.services['conductor-b'].kill(signal.SIGKILL)
        self.wait_owners(remotes, {a}, 'conductor a deciding every domain')
        self.assertLess(time.monotonic() - killed_at, TAKEOVER_S)

        # b starts again (a new member id): the ring rebalances.
        b2 = self.start_conductor('conductor-b')
        self.wait_owners(remotes, {a, b2}, 'the ring rebalanced')
        time.sleep(3 * INTERVAL_S)
        for hv in handovers:
            for disk_id, history in hv.owners.items():
                # a's domains: a only; b's: b, a, b2 - never back to a.
                self.assertEqual(len(history), len(set(history)),
                                 '%s went back and forth: %s'
                                 % (disk_id, history))
        for service in ('conductor-a', 'conductor-b'):
            self.assertTrue(self.services.services[service].alive(),
                            self.services.logs())
        self.assertEqual({}, {n: c for n, c in self.services.stop().items()
                              if c != 0}, self.services.logs())
