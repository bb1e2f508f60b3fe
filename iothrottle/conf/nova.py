"""[nova]: how the conductor reads flavors and their extra specs.

A keystoneauth1 session and auth plugin (``auth_type``, ``auth_url``,
``username``... as in any OpenStack service's config), built with
keystoneauth1's loading helpers.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'nova',
    title='Nova API',
    help='Credentials and endpoint of the Nova API, from which the '
         'conductor reads flavors\' iothrottle: extra specs.')

OPTS = [
    cfg.StrOpt('region_name',
               help='Region of the Nova endpoint in the service catalog.'),
    cfg.StrOpt('interface',
               default='internal',
               choices=['public', 'internal', 'admin'],
               help='Which endpoint of Nova in the catalog to use.'),
    cfg.StrOpt('api_version',
               default='2.61',
               help='Nova API microversion (2.61 returns extra specs with '
                    'each flavor).'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)
    ks_loading.register_session_conf_options(conf, GROUP.name)
    ks_loading.register_auth_conf_options(conf, GROUP.name)


def list_opts():
    return [(GROUP, OPTS
             + ks_loading.get_session_conf_options()
             + ks_loading.get_auth_common_conf_options())]
