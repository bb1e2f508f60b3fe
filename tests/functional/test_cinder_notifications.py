"""Cinder's notifications over the real RabbitMQ move volumes into pools.

RabbitMQ at 127.0.0.1:5672 (guest/guest; started if it does not
answer, see ``tests/rabbit.py``).  The conductor's listener
(``iothrottle.conductor.volumes``, as ``iothrottle-conductor`` builds it
from ``[cinder]``) runs on the real bus and its records land in a
SQLite database.

The notifications are Cinder's own: ``tests/cinder/emit_notifications.py``
runs in the Cinder venv of ``tools/test-cinder`` (Cinder 29.0.0;
``IOTHROTTLE_CINDER_VENV``, default ``.tox/cinder-venv``), configured by
a ``cinder.conf`` as cinder-volume is (``[DEFAULT] host`` of a backend,
``transport_url``, ``[oslo_messaging_notifications] driver =
messagingv2``, a database with Cinder's schema); it creates, retypes and
destroys Volume objects in Cinder's database and sends what
``cinder.volume.volume_utils.notify_about_volume_usage`` builds from
them, as the volume manager does after each (``create.end``,
``retype`` with the new type, ``delete.end``), through ``cinder.rpc``'s
notifier and serializer.  Nothing of the payload is written here.
"""

import json
import os
import select
import subprocess
import uuid

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from oslo_config import cfg  # noqa: E402

from iothrottle.bench import services  # noqa: E402
from iothrottle.cinder import placement  # noqa: E402
from iothrottle.conductor import volumes  # noqa: E402
from iothrottle import conf as iothrottle_conf  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle.db import migration  # noqa: E402
from tests import rabbit  # noqa: E402

DEADLINE_S = 30.0
# Cinder's set-up (imports, its schema migrated into SQLite) takes ~4 s
# here; a minute means it is stuck.
CINDER_START_S = 60.0
CINDER_BACKEND = 'cinder-1@lvm'
POOL_A = CINDER_BACKEND + '#pool-a'
POOL_B = CINDER_BACKEND + '#pool-b'
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

CINDER_CONF = """[DEFAULT]
host = %(host)s
transport_url = %(url)s
[database]
connection = sqlite:///%(db)s
[oslo_messaging_notifications]
driver = messagingv2
topics = %(topic)s
"""


def cinder_python():
    """The Python of tools/test-cinder's Cinder venv."""
    venv = os.environ.get('IOTHROTTLE_CINDER_VENV', '.tox/cinder-venv')
    return os.path.join(TOP, venv, 'bin', 'python')


class Cinder:
    """``tests/cinder/emit_notifications.py`` in the Cinder venv: one
    command in, Cinder's notification (event type, payload) out."""

    def __init__(self, conf_path, log_path):
        python = cinder_python()
        if not os.path.exists(python):
            raise AssertionError('%s missing: run ./tools/test-cinder '
                                 'first (it builds the Cinder venv)'
                                 % python)
        self.log = open(log_path, 'w')
        self.process = subprocess.Popen(
            [python, '-m', 'tests.cinder.emit_notifications',
             '--config-file', conf_path], cwd=TOP, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.answer(CINDER_START_S)

    def answer(self, timeout_s=DEADLINE_S):
        ready, _, _ = select.select([self.process.stdout], [], [],
                                    timeout_s)
        line = self.process.stdout.readline() if ready else ''
        if not line:
            raise AssertionError('no answer from Cinder in %.0f s (see %s)'
                                 % (timeout_s, self.log.name))
        answer = json.loads(line)
        if 'error' in answer:
            raise AssertionError('Cinder: %s' % answer['error'])
        return answer

    def __call__(self, *command):
        self.process.stdin.write(' '.join(map(str, command)) + '\n')
        self.process.stdin.flush()
        return self.answer()

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.log.close()


class TestCinderNotifications(testtools.TestCase):

    def setUp(self):
        super().setUp()
        rabbit.ensure_rabbitmq()
        self.log = self.useFixture(fixtures.FakeLogger(level=20))
        suffix = uuid.uuid4().hex[:8]
        topic = 'notifications-%s' % suffix
        tmp = self.useFixture(fixtures.TempDir())
        self.engine = db_api.create_engine('sqlite:///%s'
                                           % tmp.join('iothrottle.db'))
        self.addCleanup(self.engine.dispose)
        migration.upgrade(self.engine)

        conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(conf)
        conf([], project='iothrottle', default_config_files=[])
        conf.set_override('listen_notifications', True, 'cinder')
        conf.set_override('notification_transport_url', rabbit.URL,
                          'cinder')
        conf.set_override('notification_topics', [topic], 'cinder')
        queue = 'iothrottle-test-' + suffix
        conf.set_override('notification_pool', queue, 'cinder')
        the_volumes = volumes.build(conf, self.engine)
        the_volumes.start()
        self.addCleanup(services.rabbitmqctl, 'delete_queue', queue)
        self.addCleanup(the_volumes.stop)

        # Cinder's side: its own code in its own venv and process.
        with open(tmp.join('cinder.conf'), 'w') as f:
            f.write(CINDER_CONF % {'host': CINDER_BACKEND, 'url': rabbit.URL,
                                   'db': tmp.join('cinder.sqlite'),
                                   'topic': topic})
        self.cinder = Cinder(tmp.join('cinder.conf'),
                             tmp.join('cinder.log'))
        self.addCleanup(self.cinder.close)
        # The queue Cinder's notifier declares for its topic.
        self.addCleanup(services.rabbitmqctl, 'delete_queue',
                        topic + '.info')

    def recorded(self):
        return {volume_id: (pool, volume.size_bytes / placement.GIB)
                for volume_id, (pool, volume)
                in db_api.pool_volumes(self.engine).items()}

    def test_create_retype_and_delete_move_the_volume(self):
        sent = self.cinder('create', POOL_A, 20)
        volume_id = sent['payload']['volume_id']
        self.assertEqual(('volume.create.end', POOL_A, 20, 'available'),
                         (sent['event_type'], sent['payload']['host'],
                          sent['payload']['size'],
                          sent['payload']['status']))
        rabbit.wait(lambda: volume_id in self.recorded(), DEADLINE_S,
                    'the created volume recorded')
        self.assertEqual({volume_id: (POOL_A, 20.0)}, self.recorded())

        sent = self.cinder('retype', volume_id, POOL_B)
        self.assertEqual('volume.retype', sent['event_type'])
        rabbit.wait(lambda: self.recorded().get(volume_id, ('',))[0]
                    == POOL_B, DEADLINE_S, 'the retyped volume moved')

        sent = self.cinder('delete', volume_id)
        self.assertEqual('volume.delete.end', sent['event_type'])
        rabbit.wait(lambda: not self.recorded(), DEADLINE_S,
                    'the deleted volume forgotten')

    def test_a_bad_notification_is_dropped_and_the_next_one_heard(self):
        # A volume on a backend without a pool (as volumes created before
        # Cinder had pools are): no pool to put it in.
        self.cinder('create', CINDER_BACKEND, 20)
        good = self.cinder('create', POOL_A, 5)['payload']['volume_id']
        rabbit.wait(lambda: good in self.recorded(), DEADLINE_S,
                    'the good volume recorded')
        self.assertEqual({good: (POOL_A, 5.0)}, self.recorded())
        self.assertIn('Cinder notification dropped: volume.create.end: '
                      'payload.host', self.log.output)
