"""oslo.messaging clients and servers of iothrottle (threads only).

Topics: the conductor listens on ``iothrottle-conductor``; the agent of
host ``<host>`` on ``iothrottle-compute.<host>``.  Everything the agents
and the conductor send is a cast (fire and forget): a lost report costs
one interval, a lost decision is repeated or lapses with its lease.  The
two calls, each with a timeout: ``pool_state``, from Cinder's scheduler
plugins to the conductor, and ``advise``, from the operator API to one
compute agent.  Servers use the ``threading`` executor.  Call
:func:`iothrottle.rpc.threads.setup` before importing this module in an
iothrottle service; inside cinder-scheduler (``iothrottle.cinder``)
Cinder has set oslo.messaging up already.
"""

import importlib

import oslo_messaging as messaging
import oslo_messaging.opts  # noqa: F401  (messaging.opts)

CONDUCTOR_TOPIC = 'iothrottle-conductor'
COMPUTE_TOPIC = 'iothrottle-compute'
# The conductor's API (what agents and Cinder's plugins send it).
VERSION = '1.0'
# The compute agents' API, as Nova versions its RPC APIs: each method is
# sent at the oldest version that has it, so an agent of an older release
# still takes what it knows.
#   1.0 - apply(decisions)
#   1.1 - set_memory_floors(floors)
#   1.2 - advise(): a call, the host's advice (wire.advice_reply)
#   1.3 - watch(watch): what the host's checks within the interval read
#         (wire.watches)
COMPUTE_VERSION = '1.3'
APPLY_VERSION = '1.0'
MEMORY_FLOORS_VERSION = '1.1'
ADVISE_VERSION = '1.2'
WATCH_VERSION = '1.3'
# Connection attempts of one cast before it fails: a broker that is down
# must not block a decision loop (the next interval tries again).
CAST_RETRY = 1
# How long a pool_state call waits for the conductor: the scheduler waits
# with it, and a conductor that has not answered in this time is treated
# as gone (the plugins step aside).
POOL_STATE_TIMEOUT_S = 2.0
# How long the operator API waits for an agent's advice: the agent reads
# sysfs and one XMLDesc per domain (milliseconds for hundreds of them),
# so one that has not answered in this time is down or stuck, and the
# operator waits on it.
ADVISE_TIMEOUT_S = 10.0


def compute_topic(host):
    return '%s.%s' % (COMPUTE_TOPIC, host)


# oslo.messaging's options that some of its modules register on the
# global cfg.CONF only, yet read from the transport's conf: (module,
# attribute, group), as its own ConfFixture lists them.
_GLOBAL_OPTS = (
    ('oslo_messaging.rpc.dispatcher', '_dispatcher_opts', None),
    ('oslo_messaging._metrics.client', 'oslo_messaging_metrics',
     'oslo_messaging_metrics'),
    ('oslo_messaging._tracing.client', 'oslo_messaging_tracing',
     'oslo_messaging_tracing'),
)


def register_opts(conf):
    """oslo.messaging's options on ``conf`` (a private ConfigOpts)."""
    for group, opts in messaging.opts.list_opts():
        conf.register_opts(opts, group=group)
    for module_name, attribute, group in _GLOBAL_OPTS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:   # an oslo.messaging without it
            continue
        conf.register_opts(getattr(module, attribute), group=group)


def get_transport(conf, url=None):
    """The RPC transport of ``url`` (default ``[DEFAULT] transport_url``)."""
    register_opts(conf)
    return messaging.get_rpc_transport(conf, url=url)


def get_server(transport, topic, server, endpoints):
    """A threading RPC server on ``topic`` (not started)."""
    target = messaging.Target(topic=topic, server=server)
    return messaging.get_rpc_server(
        transport, target, endpoints, executor='threading',
        access_policy=messaging.DefaultRPCAccessPolicy)


class ConductorAPI:
    """What agents send the conductor.  With ``fanout`` every report goes
    to every conductor (several conductors share the domains, each keeps
    its own: ``[agent] report_fanout``), else to one of them."""

    def __init__(self, transport, fanout=False):
        self._client = messaging.get_rpc_client(
            transport, messaging.Target(topic=CONDUCTOR_TOPIC,
                                        version=VERSION), retry=CAST_RETRY)
        self._reports = (self._client.prepare(fanout=True) if fanout
                         else self._client)

    def report(self, report):
        """Cast one interval's report (:func:`iothrottle.rpc.wire.report`)."""
        self._reports.cast({}, 'report', report=report)

    def pool_state(self, pools, timeout_s=POOL_STATE_TIMEOUT_S):
        """Call: profile, scheduler and placed volumes of each Cinder pool
        in ``pools`` (:func:`iothrottle.rpc.wire.pool_state_reply`).
        Raises oslo.messaging's MessagingTimeout when no conductor
        answers within ``timeout_s`` seconds."""
        return self._client.prepare(timeout=timeout_s).call(
            {}, 'pool_state', pools=sorted(set(pools)))


def compute_target():
    """The Target of the agent's endpoint: the newest compute API version
    it serves (the dispatcher refuses a message of a newer minor)."""
    return messaging.Target(version=COMPUTE_VERSION)


class ComputeAPI:
    """What the conductor sends the agents.  ``version_cap``
    (``[upgrade_levels] compute``; None: COMPUTE_VERSION) is the newest
    version the agents of every host understand: during a rolling
    upgrade, the version of the oldest agent still running."""

    def __init__(self, transport, version_cap=None):
        self._transport = transport
        self._version_cap = version_cap
        self._clients = {}
        probe = messaging.get_rpc_client(
            transport, messaging.Target(topic=COMPUTE_TOPIC,
                                        version=COMPUTE_VERSION),
            version_cap=version_cap)
        self.version_cap = version_cap or COMPUTE_VERSION
        self.sends_memory_floors = probe.can_send_version(
            MEMORY_FLOORS_VERSION)
        self.sends_advice = probe.can_send_version(ADVISE_VERSION)
        self.sends_watch = probe.can_send_version(WATCH_VERSION)

    def _client(self, host):
        client = self._clients.get(host)
        if client is None:
            client = self._clients[host] = messaging.get_rpc_client(
                self._transport,
                messaging.Target(topic=compute_topic(host),
                                 version=COMPUTE_VERSION),
                retry=CAST_RETRY, version_cap=self._version_cap)
        return client

    def apply(self, host, decisions):
        """Cast decision dicts (:func:`iothrottle.rpc.wire.decision_to_dict`)
        to the agent of ``host``."""
        self._client(host).prepare(version=APPLY_VERSION).cast(
            {}, 'apply', decisions=decisions)

    def set_memory_floors(self, host, floors):
        """Cast the balloon floors of ``host``'s instances
        (:func:`iothrottle.rpc.wire.memory_floors`) to its agent; callers
        check ``sends_memory_floors`` (the version cap allows 1.1)
        first."""
        self._client(host).prepare(version=MEMORY_FLOORS_VERSION).cast(
            {}, 'set_memory_floors', floors=floors)

    def watch(self, host, watch):
        """Cast what ``host``'s checks within the interval read
        (:func:`iothrottle.rpc.wire.watches`) to its agent; callers
        check ``sends_watch`` (the version cap allows 1.3) first."""
        self._client(host).prepare(version=WATCH_VERSION).cast(
            {}, 'watch', watch=watch)

    def advise(self, host, timeout_s=ADVISE_TIMEOUT_S):
        """Call: the advice of ``host``'s agent
        (:func:`iothrottle.rpc.wire.advice_reply`, undecoded); callers
        check ``sends_advice`` (the version cap allows 1.2) first.
        Raises oslo.messaging's MessagingTimeout when the agent does not
        answer within ``timeout_s`` seconds, RemoteError when it
        refuses (``exc_type`` UnsupportedVersion: an agent older than
        1.2)."""
        return self._client(host).prepare(
            version=ADVISE_VERSION, timeout=timeout_s).call({}, 'advise')
