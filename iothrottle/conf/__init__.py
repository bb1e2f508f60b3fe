"""oslo.config option groups of iothrottle, one module per group.

Services build their own ``cfg.ConfigOpts`` and call :func:`register_opts`
on it; nothing here reads configuration at import time.
"""

from iothrottle.conf import api
from iothrottle.conf import balloon
from iothrottle.conf import cinder
from iothrottle.conf import cinder_volumes
from iothrottle.conf import compute
from iothrottle.conf import controller
from iothrottle.conf import coordination
from iothrottle.conf import database
from iothrottle.conf import messaging
from iothrottle.conf import nova
from iothrottle.conf import storage
from iothrottle.conf import upgrade_levels

_GROUP_MODULES = (compute, controller, database, storage, messaging,
                  nova, balloon, cinder, cinder_volumes, api,
                  upgrade_levels, coordination)


def register_opts(conf):
    """Register every iothrottle option group on ``conf``."""
    for module in _GROUP_MODULES:
        module.register_opts(conf)


def group_modules():
    """The option group modules, for ``iothrottle.conf.opts``."""
    return _GROUP_MODULES
