"""Testbed: real libvirt + QEMU guests sharing one store of known capacity.

Every performance claim of iothrottle is measured here::

    from iothrottle import testbed
    spec = [testbed.GuestSpec(name='vm1', flavor='bench.vm1',
                              project='demo', memory_mb=192, disk_mb=256)]
    with testbed.Testbed(spec, delay_ms=4, prefix='itb-') as tb:
        tb.start_load('vm1', testbed.Load(procs=10, block_kb=64))
        print(tb.measure(5.0))
        tb.stop_load('vm1')

See doc/testbed.rst.
"""

from iothrottle.testbed.core import BlockSample  # noqa: F401
from iothrottle.testbed.core import cleanup_dead  # noqa: F401
from iothrottle.testbed.core import DEFAULT_STATE_ROOT  # noqa: F401
from iothrottle.testbed.core import FileStats  # noqa: F401
from iothrottle.testbed.core import GuestSpec  # noqa: F401
from iothrottle.testbed.core import list_testbeds  # noqa: F401
from iothrottle.testbed.core import Load  # noqa: F401
from iothrottle.testbed.core import Rates  # noqa: F401
from iothrottle.testbed.core import Testbed  # noqa: F401
from iothrottle.testbed.core import TestbedError  # noqa: F401
from iothrottle.testbed.domains import GuestError  # noqa: F401
from iothrottle.testbed.domains import NOVA_NS  # noqa: F401
from iothrottle.testbed.host import ensure_libvirt  # noqa: F401
from iothrottle.testbed.host import kvm_usable  # noqa: F401
from iothrottle.testbed.images import build_images  # noqa: F401
from iothrottle.testbed.images import DEFAULT_CACHE_DIR  # noqa: F401
