"""The seek-disk fixture: a simulated disk to validate the model on.

``SeekDisk`` runs ``nbdkit python seekdisk_plugin.py`` on a unix socket
in a private directory: a read-only disk whose per-request delay follows
a Ruemmler-Wilkes seek curve from the last served offset (see
``iothrottle/seekmodel/seekdisk_plugin.py``).  The probe reaches it as
``nbd+unix:///?socket=PATH`` with its own NBD client, so neither a
kernel nbd module nor root is needed::

    with fixture.SeekDisk(time_scale=0.5) as disk:
        calibrate.main([disk.uri, '--scheduler', 'none', ...])

Needs ``/usr/bin/nbdkit`` and its Python plugin (Debian packages
``nbdkit`` and ``nbdkit-plugin-python``); ``available()`` says whether
they are there.
"""

import os
import shutil
import subprocess
import tempfile
import time

NBDKIT = '/usr/bin/nbdkit'
PLUGIN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      'seekdisk_plugin.py')

# How long nbdkit may take to create its socket (it loads Python first).
START_TIMEOUT_S = 15.0


class FixtureError(RuntimeError):
    pass


def available():
    """Whether nbdkit and its Python plugin are installed."""
    if not os.access(NBDKIT, os.X_OK):
        return False
    result = subprocess.run([NBDKIT, 'python', '--version'],
                            capture_output=True)
    return result.returncode == 0


class SeekDisk:
    """One nbdkit serving the seek-disk plugin; a context manager.

    Keyword arguments are plugin parameters (``size='160G'``,
    ``time_scale=0.5``, ...).
    """

    def __init__(self, **params):
        self.params = params
        self.dir = None
        self.proc = None

    @property
    def socket_path(self):
        return os.path.join(self.dir, 'seekdisk.sock')

    @property
    def uri(self):
        return 'nbd+unix:///?socket=%s' % self.socket_path

    def start(self):
        self.dir = tempfile.mkdtemp(prefix='iothrottle-seekdisk-')
        argv = [NBDKIT, '--foreground', '--exit-with-parent', '--readonly',
                '--unix', self.socket_path, 'python', PLUGIN]
        argv += ['%s=%s' % item for item in sorted(self.params.items())]
        self.log = open(os.path.join(self.dir, 'nbdkit.log'), 'w+')
        self.proc = subprocess.Popen(argv, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not os.path.exists(self.socket_path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                text = self.log.read().strip().replace('\n', '; ')
                self.stop()
                raise FixtureError('nbdkit did not start: %s' % text)
            time.sleep(0.05)
        return self

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
            self.log.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
