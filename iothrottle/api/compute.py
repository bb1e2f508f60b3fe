"""The API's compute RPC client: asking one agent for its host's advice.

The API process joins the message bus only for this (``[DEFAULT]
transport_url``, the conductor's): the client is made on the first
request that needs it, once per process, with the version pin of
``[upgrade_levels] compute``.  :func:`advise` turns each way the call
can fail into a one-line error naming the host: :class:`Conflict` (409)
when the pin or the agent is older than compute RPC 1.2,
:class:`Unavailable` (503) when the agent does not answer in time or
the bus cannot be reached, or the reply is malformed.
"""

import threading


class AdviceError(Exception):
    """A one-line reason the advice could not be had."""


class Conflict(AdviceError):
    """The versions in place cannot carry the call (409)."""


class Unavailable(AdviceError):
    """The agent or the bus did not answer (503)."""


def compute_factory(conf):
    """A function returning this process's ComputeAPI over ``conf``'s
    transport, made on first use."""
    lock = threading.Lock()
    made = []

    def factory():
        with lock:
            if not made:
                from iothrottle.rpc import threads
                threads.setup()
                from iothrottle.rpc import api as rpc_api
                made.append(rpc_api.ComputeAPI(
                    rpc_api.get_transport(conf),
                    version_cap=conf.upgrade_levels.compute))
            return made[0]
    return factory


def advise(factory, host, timeout_s=None):
    """The decoded advice of ``host``'s agent
    (:class:`iothrottle.rpc.wire.AdviceReply`) through the ComputeAPI
    ``factory()`` makes; raises Conflict or Unavailable."""
    from iothrottle.rpc import threads
    threads.setup()
    import oslo_messaging as messaging

    from iothrottle.rpc import api as rpc_api
    from iothrottle.rpc import wire
    timeout_s = rpc_api.ADVISE_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        compute = factory()
    except Exception as exc:
        raise Unavailable('cannot reach the message bus to ask host %s: %s'
                          % (host, _line(exc))) from None
    if not compute.sends_advice:
        raise Conflict('cannot ask host %s: compute RPC is pinned to %s '
                       '([upgrade_levels] compute); advice needs %s'
                       % (host, compute.version_cap,
                          rpc_api.ADVISE_VERSION))
    try:
        reply = compute.advise(host, timeout_s=timeout_s)
    except messaging.MessagingTimeout:
        raise Unavailable('the agent of host %s did not answer within '
                          '%g s (down, not running, or not in conductor '
                          'mode)' % (host, timeout_s)) from None
    except messaging.UnsupportedVersion:
        # The exception itself on an in-process transport (fake://).
        raise Conflict(_too_old(host)) from None
    except messaging.RemoteError as exc:
        # What a broker carries back of the agent's UnsupportedVersion.
        if exc.exc_type == 'UnsupportedVersion':
            raise Conflict(_too_old(host)) from None
        raise Unavailable('the agent of host %s failed: %s'
                          % (host, _line(exc.value or exc.exc_type))
                          ) from None
    except messaging.MessagingException as exc:
        raise Unavailable('cannot reach the message bus to ask host %s: %s'
                          % (host, _line(exc))) from None
    try:
        decoded = wire.decode_advice_reply(reply)
    except ValueError as exc:
        raise Unavailable('the agent of host %s sent a malformed reply: %s'
                          % (host, _line(exc))) from None
    if decoded.error:
        raise Unavailable('the agent of host %s cannot advise: %s'
                          % (host, decoded.error))
    return decoded


def _too_old(host):
    from iothrottle.rpc import api as rpc_api
    return ('the agent of host %s is too old to advise (it does not serve '
            'compute RPC %s)' % (host, rpc_api.ADVISE_VERSION))


def _line(exc):
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
