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
