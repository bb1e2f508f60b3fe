"""A libvirt connection that survives a libvirtd restart (shell).

The agent runs for months; libvirtd gets upgraded and restarted under it.
:class:`Connection` stands in for a ``virConnect``: before each call it
checks the connection is alive (a local check, no round trip) and opens a
new one if not.  If reopening fails the call raises ``libvirtError``
like any other libvirt failure, and the next call tries again.
"""

import libvirt
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def silence_default_errors():
    """Stop libvirt-python printing every error to stderr (its default
    handler does, even for the errors a caller catches and expects: a
    domain without the agent's metadata element is the common one).
    Callers catch ``libvirtError`` and report what matters themselves.
    """
    libvirt.registerErrorHandler(_ignore_error, None)


def _ignore_error(_ctx, _err):
    """The error handler of :func:`silence_default_errors`."""


class Connection:
    """Proxy of a ``virConnect`` to ``uri`` that reopens when it died."""

    def __init__(self, uri, open_func=libvirt.open):
        self.uri = uri
        self._open = open_func
        self._conn = open_func(uri)
        self._lost = False

    def _current(self):
        try:
            alive = self._conn.isAlive()
        except libvirt.libvirtError:
            alive = False
        if not alive:
            if not self._lost:
                LOG.warning('libvirt connection to %s lost; reconnecting',
                            self.uri)
                self._lost = True
            self._conn = self._open(self.uri)
            self._lost = False
            LOG.info('reconnected to libvirt at %s', self.uri)
        return self._conn

    def __getattr__(self, name):
        return getattr(self._current(), name)

    def close(self):
        try:
            self._conn.close()
        except libvirt.libvirtError:
            pass
