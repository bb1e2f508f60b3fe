"""Conductor and agents over the real RabbitMQ, decisions in MariaDB.

RabbitMQ listens at 127.0.0.1:5672 (guest/guest); if it does not
answer, the test starts it (``rabbitmq-server -detached``) and waits
with a deadline.  The agents' libvirt halves are fakes (the multi-host
e2e test has real ones); everything between them - oslo.messaging over
rabbit, the conductor's rounds, the per-host topics, the database - is
real, and so are the memory floors cast at compute RPC 1.1 (not sent
under a 1.0 pin; refused by an agent of the previous release, which
keeps its caps), the end of a recorded cap its agent reports lifted,
and the watch cast at 1.3 on which an agent's checks within the
interval grow caps (none under a 1.2 pin).
Faults: RabbitMQ drops every connection (``rabbitmqctl
stop_app``/``start_app``) and the loops carry on; the database is
unreachable and the conductor keeps deciding.
"""

import subprocess
import time
import uuid

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.conductor import service  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle.db import migration  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from tests.functional import test_db_mariadb  # noqa: E402
from tests import rabbit  # noqa: E402
from tests.unit.conductor import test_service  # noqa: E402
from tests.unit.rpc import test_watch  # noqa: E402

URL = rabbit.URL
START_DEADLINE_S = rabbit.START_DEADLINE_S
DEADLINE_S = 30.0
_rabbit_answers = rabbit.rabbit_answers
_wait = rabbit.wait
ensure_rabbitmq = rabbit.ensure_rabbitmq


class OnRabbit:
    """A fake:// case's transport and host names on RabbitMQ."""

    def setUp(self):
        testtools.TestCase.setUp(self)
        ensure_rabbitmq()
        self.log = self.useFixture(fixtures.FakeLogger(level=20))
        self.conf = test_service.conf_with(interval_s=0.5)
        self.transport = rpc_api.get_transport(self.conf, url=URL)
        self.addCleanup(self.transport.cleanup)
        self.suffix = uuid.uuid4().hex[:8]

    def host(self, name):
        return '%s-%s' % (name, self.suffix)


class RabbitWatchCase(OnRabbit, test_watch.TestOverFakeTransport):
    """The watch cases of fake://, re-run on RabbitMQ."""


class RabbitCase(OnRabbit, test_service.TestOverFakeTransport):
    """The fake:// cases, re-run on RabbitMQ, plus the faults."""

    def mariadb_store(self):
        db = self.useFixture(test_db_mariadb.ThrowAwayDatabase())
        engine = db_api.create_engine(db.url)
        self.addCleanup(engine.dispose)
        migration.upgrade(engine)
        return engine, service.Store(engine)

    def test_two_hosts_get_their_own_caps(self):
        engine, store = self.mariadb_store()
        conductor = self.start_conductor(store)
        h1, h2 = 'h1-' + self.suffix, 'h2-' + self.suffix
        _, a1 = self.start_agent(h1, ['u1'])
        _, a2 = self.start_agent(h2, ['u2'])
        _wait(lambda: 'u1/vda' in a1.caps and 'u2/vda' in a2.caps,
              DEADLINE_S, 'caps on both hosts')
        self.assertEqual(['u1/vda'], list(a1.caps))
        self.assertEqual(['u2/vda'], list(a2.caps))
        _wait(lambda: db_api.decisions_for_instance(engine, 'u2'),
              DEADLINE_S, 'a decision stored in MariaDB')
        record = db_api.decisions_for_instance(engine, 'u2')[0]
        self.assertEqual(('store', 'cap', 'test'),
                         (record.storage_domain, record.action,
                          record.reason))
        self.assertGreater(conductor.rounds, 0)

    def test_unreachable_database_does_not_stop_decisions(self):
        engine = db_api.create_engine(
            'mysql+pymysql://root@127.0.0.1:1/none')
        store = service.Store(engine)
        conductor = self.start_conductor(store)
        _, actuator = self.start_agent('h-' + self.suffix, ['u1'])
        _wait(lambda: conductor.rounds >= 4, DEADLINE_S, 'four rounds')
        self.assertIn('u1/vda', actuator.caps)
        self.assertFalse(store.healthy)
        self.assertEqual(1, self.log.output.count('database unreachable'))

    def test_loops_carry_on_when_rabbitmq_drops_connections(self):
        conductor = self.start_conductor(service.Store(None))
        remote, actuator = self.start_agent('h-' + self.suffix, ['u1'])
        _wait(lambda: remote.applied >= 2, DEADLINE_S, 'first decisions')
        subprocess.run(['rabbitmqctl', 'stop_app'], check=True,
                       stdout=subprocess.DEVNULL, timeout=120)
        try:
            time.sleep(2.0)
        finally:
            subprocess.run(['rabbitmqctl', 'start_app'], check=True,
                           stdout=subprocess.DEVNULL, timeout=120)
        _wait(_rabbit_answers, START_DEADLINE_S, 'RabbitMQ back')
        rounds, applied = conductor.rounds, remote.applied
        _wait(lambda: conductor.rounds >= rounds + 3
              and remote.applied >= applied + 3, 60.0,
              'rounds and applied decisions after the restart')
        self.assertIn('u1/vda', actuator.caps)

    def test_caps_lapse_when_the_conductor_is_gone(self):
        super().test_caps_lapse_when_the_conductor_is_gone()

    def test_malformed_messages_are_ignored(self):
        super().test_malformed_messages_are_ignored()
