"""The configuration the benches' agents run with.

By default a bench runs the project's defaults, so its numbers are those
of an operator who configured nothing.  ``--config-file FILE``
(repeatable, read in order, as every oslo service reads them) runs it
with an operator's own ``[controller]`` and ``[storage]`` options
instead: what a change of ``calm_intervals`` or ``guard_fraction`` does
to the floors and the totals is then measured on the same plans, not
guessed.  The plan's own interval, lease and policy are set on top of
any file: a bench compares policies on its grid, not the file's.

No libvirt here: the command checks the files before a testbed starts.
"""

from oslo_config import cfg

from iothrottle import conf as iothrottle_conf
from iothrottle.controller import policy as policy_mod

# The option groups a bench's agent reads, and the JSON records.
GROUPS = ('controller', 'storage')


def bench_conf(plan, policy, config_files=()):
    """A ConfigOpts for one agent of ``plan`` running ``policy``: the
    files' options (the defaults without any), with the plan's interval,
    lease and paper cap time and the policy set over them."""
    conf = _load(config_files)
    conf.set_override('policy', policy, 'controller')
    conf.set_override('interval_s', plan.interval_s, 'controller')
    conf.set_override('lease_s', plan.lease_s, 'controller')
    conf.set_override('paper_cap_time_s', plan.paper_cap_time_s,
                      'controller')
    return conf


def effective(config_files):
    """``{group: {option: value}}`` of :data:`GROUPS` as ``config_files``
    set them, every option read once, so a bad value fails here and not
    in the middle of a run.  Raises ``ValueError`` naming the files and
    the option; a ``[controller]`` the ``guarantee`` policy refuses
    (``defend_fraction`` over ``guard_fraction``) is refused too."""
    files = list(config_files)
    where = '--config-file %s' % ', '.join(files)
    try:
        conf = _load(files)
        values = {group: {name: _plain(conf[group][name])
                          for name in sorted(conf[group])}
                  for group in GROUPS}
        policy_mod.load_policy(conf, 'guarantee')
    except (cfg.Error, ValueError) as exc:
        raise ValueError('%s: %s' % (where, _one_line(exc))) from None
    return values


def _load(config_files):
    """Every iothrottle option group, read from ``config_files`` (the
    defaults without any), no command line."""
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf([], project='iothrottle', default_config_files=list(config_files))
    return conf


def _plain(value):
    """A JSON-ready copy of an option's value."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


def _one_line(exc):
    return ' '.join(str(exc).split())
