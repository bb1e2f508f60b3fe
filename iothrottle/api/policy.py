"""Policy enforcement: one oslo.policy Enforcer per application, its
defaults from :mod:`iothrottle.api.policies`, overrides from the
operator's ``[oslo_policy] policy_file`` (``policy.yaml``)."""

from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy
import webob.exc

from iothrottle.api import policies
from iothrottle.api import util
from iothrottle import conf as iothrottle_conf

POLICY_FILE = 'policy.yaml'


def set_defaults(conf):
    """``[oslo_policy] policy_file`` defaults to policy.yaml."""
    policy_opts.set_defaults(conf, policy_file=POLICY_FILE)


def enforcer(conf):
    """A new Enforcer over ``conf`` with every default registered."""
    the_enforcer = policy.Enforcer(conf)
    the_enforcer.register_defaults(policies.list_rules())
    the_enforcer.load_rules()
    return the_enforcer


def get_enforcer():
    """The ``oslo.policy.enforcer`` entry point, for oslopolicy-checker
    and oslopolicy-policy-generator: an Enforcer over a configuration
    of its own, read from the default iothrottle config files."""
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    set_defaults(conf)
    conf([], project='iothrottle')
    return enforcer(conf)


def authorize(context, action, target, do_raise=True):
    """Whether ``context`` may do ``action`` on ``target`` (a dict, e.g.
    ``{'project_id': ...}``); a JSON 403 if not and ``do_raise``."""
    try:
        return context.enforcer.authorize(
            action, target, context, do_raise=do_raise,
            exc=_forbidden, action=action)
    except policy.InvalidScope:
        if do_raise:
            raise _forbidden(action) from None
        return False


def _forbidden(action, *args, **kwargs):
    return webob.exc.HTTPForbidden(
        'policy does not allow %s to be performed' % action,
        json_formatter=util.json_error_formatter)
