"""The compute agent inside nova-compute: the ``cpu.iothrottle`` monitor.

Problem: Nova loads compute drivers only from its own ``nova.virt``
package, so iothrottle cannot wrap the LibvirtDriver.  nova-compute does
load resource *monitors* through stevedore, from the entry point group
``nova.compute.monitors.cpu`` (enabled with ``[DEFAULT] compute_monitors
= cpu.<name>``), and builds each with the resource tracker, whose
``driver`` holds nova-compute's libvirt connection.  That is the door.

Approach: :class:`Monitor` subclasses Nova's ``virt_driver`` CPU monitor,
so CPU metrics keep flowing (Nova enables one ``cpu`` monitor:
``cpu.iothrottle`` replaces ``cpu.virt_driver``), and runs the compute
agent in conductor mode - what ``iothrottle-compute`` runs without
``--standalone``, built by the same functions of
:mod:`iothrottle.cmd.compute` - on a daemon thread, on nova-compute's own
libvirt connection.  Four facts of Nova 34's code shape it:

* ``MonitorHandler.check_enabled_monitor`` (nova/compute/monitors/
  __init__.py) takes a monitor's namespace from the *module path* of its
  entry point (``a.b.mod:Class`` gives ``a.b``) and looks it up in its
  own table: ``iothrottle.nova.monitor:Monitor`` would fail with a
  KeyError, logged as "Could not load" by every nova-compute of a host
  where iothrottle is installed, enabled or not.  So the entry point
  names ``nova.compute.monitors.cpu.iothrottle:Monitor``: a two-line
  module that re-exports :class:`Monitor`, kept in this repository at
  ``nova/compute/monitors/cpu/iothrottle.py`` and installed by
  iothrottle into Nova's package directory (``[files] modules`` in
  setup.cfg; an editable install finds it through setuptools' finder).
  It is the only iothrottle file under ``nova/``; Nova is not modified
  and no import hook is installed.
* stevedore builds every monitor of the group *before* that check and
  drops the ones not enabled, so the constructor does nothing more than
  Nova's.  The agent starts on the first :meth:`Monitor.populate_metrics`,
  which Nova calls on enabled monitors only.
* That first call comes from ``update_available_resource`` at
  nova-compute's start, after ``init_host`` initialised the driver's
  libvirt ``Host``: the agent never opens the shared connection first.
* nova-compute runs on native threads and poisons eventlet; before
  anything imports oslo.messaging, :func:`iothrottle.rpc.threads.setup`
  makes sure of it.  A nova-compute on eventlet gets no agent.

The connection is ``driver._host.get_connection()`` behind
:class:`iothrottle.compute.connection.Connection`, whose reopen function
is that same call: after a libvirtd restart Nova's ``Host`` reconnects
and the agent follows.

Configuration: iothrottle's options only, in a private
``cfg.ConfigOpts`` read from ``/etc/iothrottle/iothrottle.conf`` (the
file of ``iothrottle-compute`` and the conductor; another path in the
environment variable ``IOTHROTTLE_CONFIG_FILE`` of nova-compute).
nova.conf is not read, except that the agent's host name is Nova's
(``[DEFAULT] host``, through the resource tracker) instead of ``[agent]
host``.

Failures never reach Nova: a missing or invalid file, a driver that is
not libvirt, eventlet, or an agent that dies log one error line and the
monitor goes on reporting CPU metrics.  At the process's exit the agent
gets :data:`STOP_TIMEOUT_S` to lift its caps and stop its RPC server.
"""

import atexit
import os
import threading

from nova.compute.monitors.cpu import virt_driver
from oslo_config import cfg
from oslo_log import log as logging

from iothrottle.cmd import compute as compute_cmd
from iothrottle.compute import connection as connection_mod
from iothrottle import conf as iothrottle_conf
from iothrottle.rpc import threads

LOG = logging.getLogger(__name__)

CONFIG_FILE_ENV = 'IOTHROTTLE_CONFIG_FILE'
DEFAULT_CONFIG_FILE = '/etc/iothrottle/iothrottle.conf'
# At nova-compute's exit, how long the agent may take to lift its caps.
STOP_TIMEOUT_S = 10.0
THREAD_NAME = 'iothrottle-agent'


class StartError(Exception):
    """Why the agent cannot start, in one line."""


def config_path():
    return os.environ.get(CONFIG_FILE_ENV) or DEFAULT_CONFIG_FILE


def check_native_threads():
    """Raise StartError if nova-compute runs on eventlet; else refuse
    eventlet for good and select oslo.service's threading backend."""
    from nova import monkey_patch
    if monkey_patch.is_patched():
        raise StartError('nova-compute runs on eventlet; the agent needs '
                         'native threads ([DEFAULT] concurrency_backend = '
                         'threading)')
    threads.setup()


def load_conf(path):
    """iothrottle's options from ``path`` in a private ConfigOpts, every
    value checked.  Call :func:`check_native_threads` first."""
    from iothrottle.rpc import api as rpc_api
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    rpc_api.register_opts(conf)
    conf([], project='iothrottle', default_config_files=[path],
         default_config_dirs=[])
    _read_every_option(conf)
    return conf


def _read_every_option(conf):
    """oslo.config checks a value when it is read: read them all now, so
    a bad one stops the start instead of every interval."""
    for name in conf:
        value = conf[name]
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt_name in value:
                value[opt_name]


def libvirt_host_of(driver):
    """The libvirt ``Host`` of Nova's compute driver."""
    host = getattr(driver, '_host', None)
    if not callable(getattr(host, 'get_connection', None)):
        raise StartError('compute driver %s has no libvirt connection; '
                         'the agent needs the libvirt driver'
                         % type(driver).__name__)
    return host


def shared_connection(libvirt_host):
    """nova-compute's libvirt connection, reopened through Nova's Host."""
    uri = libvirt_host.get_connection().getURI()
    return connection_mod.Connection(
        uri, open_func=lambda _uri: libvirt_host.get_connection())


def one_line(exc):
    lines = str(exc).splitlines()
    return lines[0] if lines else type(exc).__name__


class AgentThread:
    """The compute agent in conductor mode on a daemon thread.

    ``stepped`` is set after every interval (``last_report`` is its
    ``StepReport``); ``restored`` lists the disks left capped by a
    previous run that the agent restored when it started.
    """

    def __init__(self, conf, libvirt_host, host):
        self.conf = conf
        self.libvirt_host = libvirt_host
        self.host = host
        self.connection = None
        self.restored = ()
        self.last_report = None
        self.stepped = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME,
                                        daemon=True)

    def start(self):
        self._thread.start()
        atexit.register(self.stop)

    def stop(self, timeout_s=STOP_TIMEOUT_S):
        """Stop the loop; wait up to ``timeout_s`` for caps to be lifted."""
        self._stop.set()
        self._thread.join(timeout_s)

    def is_alive(self):
        return self._thread.is_alive()

    def _run(self):
        try:
            self.connection = shared_connection(self.libvirt_host)
            agent, self.restored = compute_cmd.conductor_mode_agent(
                self.conf, self.connection)
            if self.restored:
                LOG.info('restored %d disk(s) left capped by a previous '
                         'run: %s', len(self.restored),
                         ', '.join(self.restored))
            compute_cmd.serve_conductor(self.conf, agent, self.host,
                                        self._stop, on_step=self._on_step)
        except Exception as exc:
            LOG.error('iothrottle agent stopped: %s', one_line(exc))
            LOG.debug('iothrottle agent failure', exc_info=True)

    def _on_step(self, report):
        self.last_report = report
        self.stepped.set()


def start_agent(resource_tracker, path):
    """Start the agent of ``resource_tracker``'s host with the options of
    ``path``; returns its AgentThread or raises why not."""
    check_native_threads()
    conf = load_conf(path)
    libvirt_host = libvirt_host_of(resource_tracker.driver)
    agent_thread = AgentThread(conf, libvirt_host, resource_tracker.host)
    agent_thread.start()
    LOG.info('iothrottle agent of host %s started in nova-compute (%s)',
             resource_tracker.host, path)
    return agent_thread


class Monitor(virt_driver.Monitor):
    """Nova's virt_driver CPU monitor that also runs the compute agent
    (see the module docstring).  ``agent_thread`` is the running agent's
    :class:`AgentThread`, None before the first ``populate_metrics`` or
    if the agent could not start."""

    def __init__(self, resource_tracker):
        super().__init__(resource_tracker)
        self.resource_tracker = resource_tracker
        self.agent_thread = None
        self._start_lock = threading.Lock()
        self._start_tried = False

    def populate_metrics(self, metric_list):
        self._start_agent_once()
        super().populate_metrics(metric_list)

    def _start_agent_once(self):
        with self._start_lock:
            if self._start_tried:
                return
            self._start_tried = True
            path = config_path()
            try:
                self.agent_thread = start_agent(self.resource_tracker, path)
            except Exception as exc:
                LOG.error('iothrottle agent not started (%s): %s', path,
                          one_line(exc))
