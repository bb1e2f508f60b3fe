"""Functional tests: real libvirt + QEMU, MariaDB and RabbitMQ."""

import os


def testbed_skip_reason():
    """Why the testbed cannot run here, or None (it can)."""
    try:
        import libvirt  # noqa: F401
    except ImportError:   # pragma: no cover
        return 'libvirt-python is not installed'
    if os.geteuid() != 0:
        return 'the testbed needs root'
    return None
