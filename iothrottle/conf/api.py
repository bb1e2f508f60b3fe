"""[api]: the operator REST API, ``iothrottle-api``.

The API reads and writes the conductor's database (``[database]``);
Keystone tokens are checked by keystonemiddleware's ``auth_token``
(options in ``[keystone_authtoken]``), policies by oslo.policy
(``[oslo_policy]``), and flavor lookups go to Nova with the ``[nova]``
credentials.  ``host`` and ``port`` serve only the ``iothrottle-api``
console script (a single-process server for a quick local run);
deployed, the WSGI module ``iothrottle.wsgi.api:application`` runs
under uwsgi or gunicorn, which choose their own sockets.
"""

from oslo_config import cfg

from iothrottle.conf import groups

# The port of the console script, unassigned in IANA's registry and by
# every other OpenStack service.
DEFAULT_PORT = 8797

GROUP = cfg.OptGroup(
    'api',
    title='Operator API',
    help='The iothrottle-api service: tiers, storage domains, instance '
         'throttle state, Cinder pools and decisions over REST.')

OPTS = [
    cfg.StrOpt('auth_strategy',
               default='keystone',
               choices=[('keystone', 'Keystone tokens, checked by '
                                     'keystonemiddleware auth_token'),
                        ('noauth2', 'no tokens: the X-Auth-Token header '
                                    'is "user:project" and X-Roles the '
                                    'roles; for tests only')],
               help='How requests are authenticated.'),
    cfg.HostAddressOpt('host',
                       default='127.0.0.1',
                       help='Address the iothrottle-api console script '
                            'listens on (not used under uwsgi).'),
    cfg.PortOpt('port',
                default=DEFAULT_PORT,
                help='TCP port of the iothrottle-api console script '
                     '(default %d; not used under uwsgi).' % DEFAULT_PORT),
    cfg.IntOpt('max_limit',
               default=1000, min=1, max=100000,
               help='Most items a list (decisions, instance history) '
                    'returns in one response, whatever "limit" asks. '
                    'Items.'),
    cfg.IntOpt('max_body_bytes',
               default=1024 * 1024, min=1024,
               help='Largest request body accepted (a pool profile is the '
                    'largest; a few KiB). Bytes.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
