"""Registration shared by the option group modules."""

from oslo_config import cfg


def register(conf, group, opts):
    """Register ``opts`` in a fresh copy of ``group`` on ``conf``.

    ``ConfigOpts.register_group`` keeps a shallow copy of the group it is
    given, so the options dict - where ``set_override`` stores overrides -
    would be shared by every ``ConfigOpts`` that registered the same
    module-level group: an override in one leaked into all.  A new
    ``OptGroup`` per ``ConfigOpts`` keeps them apart.
    """
    conf.register_group(cfg.OptGroup(group.name, title=group.title,
                                     help=group.help))
    conf.register_opts(opts, group=group.name)


def session_opts(service, timeout_s):
    """keystoneauth1's session options for talking to ``service`` (its
    name as operators know it), with a finite ``timeout`` of
    ``timeout_s`` seconds by default (keystoneauth1's own waits for
    ever)."""
    from keystoneauth1 import loading as ks_loading
    opts = ks_loading.get_session_conf_options()
    for opt in opts:
        if opt.dest == 'timeout':
            opt.default = timeout_s
            opt.help = ('Seconds a request to %s may take (default %g).'
                        % (service, timeout_s))
    return opts


def register_client(conf, group, opts, service, timeout_s):
    """Register ``opts`` and a keystoneauth1 client of ``service`` (its
    session options, ``timeout_s`` by default, and its auth plugin
    options) in ``group``."""
    from keystoneauth1 import loading as ks_loading
    register(conf, group, opts)
    conf.register_opts(session_opts(service, timeout_s), group=group.name)
    ks_loading.register_auth_conf_options(conf, group.name)


def list_client(group, opts, service, timeout_s):
    """The ``list_opts()`` entry of a group made by
    :func:`register_client`."""
    from keystoneauth1 import loading as ks_loading
    return [(group, opts + session_opts(service, timeout_s)
             + ks_loading.get_auth_common_conf_options())]
