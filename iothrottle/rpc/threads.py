"""Native threads only: keep eventlet out of every iothrottle service.

Nova 34's nova-compute runs on native threads and refuses eventlet; so
do iothrottle's services.  ``import oslo_messaging`` would load
oslo.service's eventlet backend and futurist imports eventlet when it
can, so - as ``nova/monkey_patch.py`` does - :func:`setup` makes any
import of ``eventlet*`` fail (the libraries fall back to threads) and
selects oslo.service's threading backend.  Every service entry point
calls it before importing ``oslo_messaging``; it is idempotent and
cheap, and does nothing to a process (nova-compute) that already chose
threading.
"""

import sys


class EventletBlocker:
    """A ``sys.meta_path`` finder that refuses ``eventlet`` imports."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == 'eventlet' or fullname.startswith('eventlet.'):
            raise ImportError('iothrottle runs on native threads: importing '
                              '%s is refused' % fullname)
        return None


def setup():
    """Refuse eventlet and select oslo.service's threading backend.

    Raises RuntimeError when eventlet is loaded already (something
    imported it before the entry point could stop it: a bug).
    """
    if 'eventlet' in sys.modules:
        raise RuntimeError('eventlet was imported before iothrottle could '
                           'refuse it; iothrottle runs on native threads')
    if not any(isinstance(finder, EventletBlocker)
               for finder in sys.meta_path):
        sys.meta_path.insert(0, EventletBlocker())
    from oslo_service import backend
    # A no-op when already threading (nova-compute chose it, or a second
    # call); raises BackendAlreadySelected if someone chose eventlet.
    backend.init_backend(backend.BackendType.THREADING)
