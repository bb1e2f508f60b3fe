"""``cpu.iothrottle``: iothrottle's monitor, where Nova looks for it.

Nova's ``MonitorHandler`` takes a monitor's namespace from the module
path of its entry point, so the monitor's module must be
``nova.compute.monitors.cpu.<name>``.  iothrottle installs this file
into Nova's package (``[files] modules`` in setup.cfg); the monitor is
:class:`iothrottle.nova.monitor.Monitor`, whose docstring tells why.
"""

from iothrottle.nova import monitor

Monitor = monitor.Monitor
