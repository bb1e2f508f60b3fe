"""[nova]: how the conductor reads instances and their flavors from Nova.

A keystoneauth1 session and auth plugin (``auth_type``, ``auth_url``,
``username``... as in any OpenStack service's config), built with
keystoneauth1's loading helpers.  The session's ``timeout`` defaults to
:data:`DEFAULT_TIMEOUT_S` here (keystoneauth1's own default waits for
ever), so a hung Nova delays the placements' refresh, never more.
"""

from oslo_config import cfg

from iothrottle.conf import groups

# Seconds one Nova request may take: a listing of one host's servers is
# small, and a hung Nova must free the refresh worker.
DEFAULT_TIMEOUT_S = 10.0

GROUP = cfg.OptGroup(
    'nova',
    title='Nova API',
    help='Credentials and endpoint of the Nova API, from which the '
         'conductor (with [conductor] guarantees = nova) reads which '
         'compute host runs each instance and its flavor\'s iothrottle: '
         'extra specs. Needs admin credentials (all tenants, hosts).')

OPTS = [
    cfg.StrOpt('region_name',
               help='Region of the Nova endpoint in the service catalog.'),
    cfg.StrOpt('interface',
               default='internal',
               choices=['public', 'internal', 'admin'],
               help='Which endpoint of Nova in the catalog to use.'),
    cfg.StrOpt('api_version',
               default='2.61',
               help='Nova API microversion, at least 2.47 (from 2.47 each '
                    'server embeds its flavor with the extra specs).'),
    cfg.FloatOpt('instance_refresh_s',
                 default=60.0, min=1.0,
                 help='The instances Nova places on a reporting compute '
                      'host (and their flavors\' guarantees) are listed '
                      'again once this old. Seconds.'),
    cfg.FloatOpt('instance_retry_s',
                 default=15.0, min=1.0,
                 help='A host reporting an instance that Nova does not '
                      'place on it (a new instance, a finished live '
                      'migration, or a spoofed report) is listed again at '
                      'most this often; until then the instance\'s disks '
                      'are left out of every decision. Seconds.'),
]


def register_opts(conf):
    groups.register_client(conf, GROUP, OPTS, 'Nova', DEFAULT_TIMEOUT_S)


def list_opts():
    return groups.list_client(GROUP, OPTS, 'Nova', DEFAULT_TIMEOUT_S)
