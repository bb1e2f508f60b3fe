"""Entry point of ``oslo-config-generator`` (namespace ``iothrottle``)."""

from oslo_log import log as logging

from iothrottle import conf as iothrottle_conf


def list_opts():
    """Return ``[(group, [opts])]`` gathered from every group module."""
    opts = []
    for module in iothrottle_conf.group_modules():
        opts.extend(module.list_opts())
    return opts


def set_defaults(conf=None):
    """Default log levels for the libraries iothrottle talks through."""
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['libvirt=WARN'])
