"""Cinder's notifications over the real RabbitMQ move volumes into pools.

RabbitMQ at 127.0.0.1:5672 (guest/guest; started if it does not
answer, see ``tests/rabbit.py``).  The conductor's listener
(``iothrottle.conductor.volumes``, as ``iothrottle-conductor`` builds it
from ``[cinder]``) runs on the real bus; the test publishes what Cinder
29 publishes, through an oslo.messaging Notifier set up as Cinder's
``cinder/rpc.py`` sets its own (``get_notifier('volume', host)``:
publisher ``volume.<host>``, driver ``messagingv2``, exchange
``cinder``), and the records land in a SQLite database.

The payloads are copied from Cinder 29.0.0's source (the Cinder venv of
``tools/test-cinder`` cannot build them without a Cinder database):
``cinder/volume/volume_utils.py`` ``_usage_from_volume`` gives the keys,
``notify_about_volume_usage`` the event type ``volume.<suffix>``;
``cinder/volume/flows/manager/create_volume.py`` sends ``create.end``,
``cinder/volume/manager.py`` ``delete_volume`` ``delete.end`` and
``retype`` ``retype`` with ``extra_usage_info={'volume_type':
new_type_id}``.
"""

import uuid

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from oslo_config import cfg  # noqa: E402
import oslo_messaging  # noqa: E402

from iothrottle.bench import services  # noqa: E402
from iothrottle.cinder import placement  # noqa: E402
from iothrottle.conductor import volumes  # noqa: E402
from iothrottle import conf as iothrottle_conf  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle.db import migration  # noqa: E402
from tests import rabbit  # noqa: E402

DEADLINE_S = 30.0
CINDER_HOST = 'cinder-1'
POOL_A = 'cinder-1@lvm#pool-a'
POOL_B = 'cinder-1@lvm#pool-b'


def usage(volume_id, host, size_gib, volume_type_id, status='available'):
    """The payload of Cinder 29's ``_usage_from_volume`` for a volume with
    no attachments, metadata or Glance image, as the JSON it travels as
    (datetimes are ``isoformat()`` strings there already)."""
    return {
        'tenant_id': 'project-1',
        'host': host,
        'user_id': 'user-1',
        'availability_zone': 'nova',
        'volume_id': volume_id,
        'volume_type': volume_type_id,
        'display_name': 'data',
        'launched_at': '2026-11-22T10:00:00.000000',
        'created_at': '2026-11-22T09:59:58.000000',
        'status': status,
        'snapshot_id': None,
        'size': size_gib,
        'replication_status': None,
        'replication_extended_status': None,
        'replication_driver_data': None,
        'metadata': [],
        'volume_attachment': [],
    }


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

        # Cinder's side: cinder/rpc.py set_defaults('cinder') (a process
        # global of oslo.messaging, restored after), init() and
        # get_notifier().
        oslo_messaging.set_transport_defaults('cinder')
        self.addCleanup(oslo_messaging.set_transport_defaults, 'openstack')
        cinder_conf = cfg.ConfigOpts()
        cinder_conf([], project='cinder', default_config_files=[])
        transport = oslo_messaging.get_notification_transport(
            cinder_conf, url=rabbit.URL)
        self.addCleanup(transport.cleanup)
        self.notifier = oslo_messaging.Notifier(
            transport, driver='messagingv2', topics=[topic]).prepare(
                publisher_id='volume.%s' % CINDER_HOST)

    def recorded(self):
        return {volume_id: (pool, volume.size_bytes / placement.GIB)
                for volume_id, (pool, volume)
                in db_api.pool_volumes(self.engine).items()}

    def test_create_retype_and_delete_move_the_volume(self):
        volume_id = str(uuid.uuid4())
        self.notifier.info({}, 'volume.create.end',
                           usage(volume_id, POOL_A, 20, None))
        rabbit.wait(lambda: volume_id in self.recorded(), DEADLINE_S,
                    'the created volume recorded')
        self.assertEqual({volume_id: (POOL_A, 20.0)}, self.recorded())

        self.notifier.info({}, 'volume.retype',
                           usage(volume_id, POOL_B, 20, str(uuid.uuid4())))
        rabbit.wait(lambda: self.recorded().get(volume_id, ('',))[0]
                    == POOL_B, DEADLINE_S, 'the retyped volume moved')

        self.notifier.info({}, 'volume.delete.end',
                           usage(volume_id, POOL_B, 20, None,
                                 status='deleting'))
        rabbit.wait(lambda: not self.recorded(), DEADLINE_S,
                    'the deleted volume forgotten')

    def test_a_bad_notification_is_dropped_and_the_next_one_heard(self):
        self.notifier.info({}, 'volume.create.end',
                           usage('bad', 'cinder-1@lvm', 20, None))
        good = str(uuid.uuid4())
        self.notifier.info({}, 'volume.create.end',
                           usage(good, POOL_A, 5, None))
        rabbit.wait(lambda: good in self.recorded(), DEADLINE_S,
                    'the good volume recorded')
        self.assertEqual({good: (POOL_A, 5.0)}, self.recorded())
        self.assertIn('Cinder notification dropped: volume.create.end: '
                      'payload.host', self.log.output)
