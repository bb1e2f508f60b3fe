"""``iothrottle.wsgi.api:application``: the operator API for a WSGI
server, e.g.::

    uwsgi --http-socket 127.0.0.1:8797 --module iothrottle.wsgi.api:application

The configuration files are ``IOTHROTTLE_CONFIG_FILES`` (a
comma-separated list) if set, else /etc/iothrottle/iothrottle.conf
(oslo.config's search for project ``iothrottle``).  The application is
made on import, once per worker process.
"""

import os
import threading

from oslo_log import log as logging

from iothrottle.api import config
from iothrottle.api import deploy

CONFIG_FILES_ENV = 'IOTHROTTLE_CONFIG_FILES'


def init_application():
    """The WSGI application of the configuration the environment names."""
    files = os.environ.get(CONFIG_FILES_ENV)
    conf = config.build_conf(
        [], default_config_files=(
            [f for f in files.split(',') if f] if files else None))
    logging.setup(conf, 'iothrottle')
    return deploy.deploy(conf)


application = None
with threading.Lock():
    if application is None:
        application = init_application()
