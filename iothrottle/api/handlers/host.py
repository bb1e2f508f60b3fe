"""``/hosts/{host}/advice``: seed 002 as advice for one compute host.

The API asks the host's agent over compute RPC 1.2 (``advise``, a call
with a timeout: :mod:`iothrottle.api.compute`); the agent inspects its
block devices and running domains (:mod:`iothrottle.compute.inventory`)
and answers the findings of :mod:`iothrottle.compute.advice`, each with
the seed section it follows and the effect the seed reports.  Nothing
is stored.  A host whose agent does not answer is a 503 naming it; a
host whose agent (or the ``[upgrade_levels] compute`` pin) is older
than 1.2 a 409.  Admin only: the findings name every guest of the host.
"""

import dataclasses
import re

from iothrottle.api import compute
from iothrottle.api.policies import host as host_policies
from iothrottle.api import policy
from iothrottle.api import util

# A host name as Nova and the agents' topics have them ([agent] host:
# the hostname by default): letters, digits, '.', '_' and '-'.
_HOST_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$')


@util.Wsgify
def show_advice(req):
    policy.authorize(util.context(req), host_policies.ADVICE, {})
    util.query(req, ())
    host = util.route_arg(req, 'host')
    if not _HOST_RE.match(host):
        raise util.bad_request('host: must be a host name of letters, '
                               "digits, '.', '_' and '-', got %r"
                               % host[:64])
    try:
        reply = compute.advise(req.environ['iothrottle.compute'], host)
    except compute.Conflict as exc:
        raise util.conflict(str(exc)) from None
    except compute.Unavailable as exc:
        raise util.unavailable(str(exc)) from None
    return util.json_response(req, {'advice': {
        'host': reply.host,
        'devices': reply.devices,
        'instances': reply.instances,
        'findings': [dataclasses.asdict(f) for f in reply.findings],
        'notes': list(reply.notes),
    }})
