"""The API's configuration: iothrottle's option groups plus those of
the libraries in its pipeline (CORS, proxy headers, oslo.policy,
oslo.log; auth_token and healthcheck register their own when made)."""

from oslo_config import cfg
from oslo_log import log as logging
from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi

from iothrottle.api import policy
from iothrottle import conf as iothrottle_conf


def build_conf(argv, prog='iothrottle-api', default_config_files=None):
    """A ConfigOpts with every option the API reads, parsed from
    ``argv`` and the config files (default: oslo.config's search for
    project ``iothrottle``: /etc/iothrottle/iothrottle.conf)."""
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf.register_opts(cors.CORS_OPTS, 'cors')
    conf.register_opts(http_proxy_to_wsgi.OPTS, 'oslo_middleware')
    logging.register_options(conf)
    policy.set_defaults(conf)
    conf(argv, project='iothrottle', prog=prog,
         default_config_files=default_config_files)
    return conf
