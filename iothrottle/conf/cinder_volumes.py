"""[cinder]: how the conductor follows Cinder's volumes into their pools.

Two sources keep the ``pool_volumes`` table (what the seek-model weigher
and filter count on each pool) in step with Cinder, without
``iothrottle-manage pool add-volume``:

* Cinder's notifications (``listen_notifications``): the volumes
  created, deleted, retyped, resized, managed and unmanaged, as Cinder
  publishes them on its notification bus;
* Cinder's API (keystoneauth1 credentials, ``auth_type`` and friends):
  read at start-up and every ``reconcile_interval_s``, it fixes what the
  notifications missed (a migration, which Cinder 29 does not announce;
  a conductor that was down), and gives each volume type's guarantee.
"""

from oslo_config import cfg

from iothrottle.conf import groups

# Seconds one Cinder request may take (keystoneauth1's own default waits
# for ever): a page of volumes is small.
DEFAULT_TIMEOUT_S = 10.0

GROUP = cfg.OptGroup(
    'cinder',
    title='Cinder volumes in their pools',
    help='Where the conductor learns which volume sits on which Cinder '
         'pool: Cinder\'s notifications and its API (admin credentials: '
         'all tenants\' volumes, volume types\' extra specs).')

OPTS = [
    cfg.BoolOpt('listen_notifications',
                default=False,
                help='Listen to Cinder\'s notifications (volume.create.end, '
                     'delete.end, retype, resize.end, manage_existing.end, '
                     'unmanage.end) and record each volume on its pool. '
                     'Cinder must send them: [oslo_messaging_notifications] '
                     'driver = messagingv2 in cinder.conf.'),
    cfg.StrOpt('notification_transport_url',
               secret=True,
               help='oslo.messaging URL of the bus Cinder notifies on (its '
                    '[oslo_messaging_notifications] transport_url). Unset: '
                    'this service\'s [oslo_messaging_notifications] '
                    'transport_url, else its [DEFAULT] transport_url.'),
    cfg.ListOpt('notification_topics',
                default=['notifications'],
                help='Topics Cinder notifies on (its '
                     '[oslo_messaging_notifications] topics).'),
    cfg.StrOpt('notification_exchange',
               default='cinder',
               help='The exchange Cinder notifies on (Cinder\'s '
                    'control_exchange).'),
    cfg.StrOpt('notification_pool',
               default='iothrottle-conductor',
               help='Listener pool: the conductors share one queue of their '
                    'own on each topic, so that they do not take '
                    'notifications away from other consumers (Ceilometer).'),
    cfg.FloatOpt('reconcile_interval_s',
                 default=3600.0, min=0.0, max=7 * 86400.0,
                 help='With credentials (auth_type set), the conductor '
                      'lists every volume from Cinder\'s API at start-up '
                      '(in the background) and again this often, and makes '
                      'the recorded volumes match: this is how a migrated '
                      'volume reaches its new pool. 0: at start-up only. '
                      'Seconds.'),
    cfg.FloatOpt('type_refresh_s',
                 default=300.0, min=1.0,
                 help='Volume types (their iothrottle: extra specs and QoS '
                      'specs) are read again from Cinder\'s API once this '
                      'old. Seconds.'),
    cfg.StrOpt('region_name',
               help='Region of the Cinder endpoint in the service catalog.'),
    cfg.StrOpt('interface',
               default='internal',
               choices=['public', 'internal', 'admin'],
               help='Which endpoint of Cinder (service type volumev3) in '
                    'the catalog to use.'),
]


def register_opts(conf):
    groups.register_client(conf, GROUP, OPTS, 'Cinder', DEFAULT_TIMEOUT_S)


def list_opts():
    return groups.list_client(GROUP, OPTS, 'Cinder', DEFAULT_TIMEOUT_S)
