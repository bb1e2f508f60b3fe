"""The ``cpu.iothrottle`` monitor, loaded by Nova 34's own MonitorHandler.

Each test runs :func:`probe` in a fresh interpreter started the way
nova-compute starts (``nova/cmd/__init__.py``: native threads, eventlet
poisoned).  This test runner cannot stand in for it: importing Nova here
has loaded eventlet already.  The probe reads a nova.conf with Nova's
CONF, gives Nova's ``MonitorHandler`` a resource-tracker-like object
whose driver has a real Nova libvirt ``Host`` on libvirt's test driver
(``test:///default``: one running domain "test" with disk vda), calls
``populate_metrics`` as the resource tracker does and prints what it saw
as JSON; the tests judge that.  The agent reports to a ``fake://``
message bus.
"""

import json
import os
import subprocess
import sys
import textwrap
import traceback

import fixtures
import testtools

# The probe's upper bound for the agent's first interval; it returns as
# soon as the agent signals its step.  Seconds.
STEP_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 120.0
INTERVAL_S = 0.5
NOVA_HOST = 'probe-compute-1'
LEFTOVER_IOPS = 100
# The probe's output line that carries its JSON starts with this.
MARK = 'PROBE-FACTS '

PROBE_COMMAND = ('import sys; from tests.nova import test_monitor; '
                 'test_monitor.probe()')


def probe():
    """Print :func:`probe_facts` as JSON and end the process (Nova's
    event and executor threads would keep it alive)."""
    try:
        facts = probe_facts()
        sys.stdout.write('\n' + MARK + json.dumps(facts) + '\n')
        code = 0
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def probe_facts():
    """nova-compute's start, the monitors, one interval: what was seen."""
    from nova import monkey_patch
    monkey_patch.patch(backend='threading')

    import logging
    import threading

    import libvirt
    from nova.compute import monitors
    from nova.compute.monitors.cpu import virt_driver
    import nova.conf
    from nova import objects
    from nova.virt.libvirt import host as libvirt_host

    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: records.append(
        '%s %s: %s' % (record.levelname, record.name, record.getMessage()))
    logging.getLogger().addHandler(handler)

    nova.conf.CONF(sys.argv[1:], project='nova')
    objects.register_all()
    nova_host = libvirt_host.Host('test:///default')
    nova_host.initialize()            # what LibvirtDriver.init_host does
    domain = nova_host.get_connection().lookupByName('test')
    # A cap "left by a previous run": the agent restores it on start
    # (the test driver refuses a total above its _max).
    domain.setBlockIoTune('vda', {'total_iops_sec': LEFTOVER_IOPS,
                                  'total_iops_sec_max': LEFTOVER_IOPS},
                          libvirt.VIR_DOMAIN_AFFECT_LIVE)

    tracker = _ResourceTracker(nova.conf.CONF.host, _Driver(nova_host))
    loaded = monitors.MonitorHandler(tracker).monitors
    metrics = objects.MonitorMetricList()
    for monitor in loaded:
        monitor.populate_metrics(metrics)

    facts = {
        'monitors': ['%s.%s' % (type(m).__module__, type(m).__name__)
                     for m in loaded],
        'virt_driver_monitors': [isinstance(m, virt_driver.Monitor)
                                 for m in loaded],
        'metrics': sorted(m.name for m in metrics.objects),
        'metric_names': sorted(set().union(
            *(m.get_metric_names() for m in loaded))),
        'agent': None,
    }
    agent_thread = getattr(loaded[0], 'agent_thread', None) if loaded \
        else None
    if agent_thread is not None:
        stepped = agent_thread.stepped.wait(STEP_TIMEOUT_S)
        report = agent_thread.last_report
        facts['agent'] = {
            'stepped': stepped,
            'host': agent_thread.host,
            'errors': list(report.errors) if report else None,
            'restored': list(agent_thread.restored),
            'uuid': domain.UUIDString(),
            'shares_nova_connection': (agent_thread.connection._conn
                                       is nova_host.get_connection()),
            'live_iops_after': domain.blockIoTune(
                'vda', libvirt.VIR_DOMAIN_AFFECT_LIVE)['total_iops_sec'],
        }
        agent_thread.stop()
        facts['agent']['stopped'] = not agent_thread.is_alive()
    facts['agent_threads'] = [t.name for t in threading.enumerate()
                              if t.name.startswith('iothrottle')]
    facts['eventlet'] = 'eventlet' in sys.modules
    facts['log'] = records
    return facts


class _Driver:
    """What the monitor sees of LibvirtDriver: its Host, and CPU stats
    read as LibvirtDriver.get_host_cpu_stats reads them."""

    def __init__(self, host):
        self._host = host

    def get_host_cpu_stats(self):
        return self._host.get_cpu_stats()


class _ResourceTracker:
    """What a monitor is built with: the host name and the driver."""

    def __init__(self, host, driver):
        self.host = host
        self.driver = driver


IOTHROTTLE_CONF = '''
[DEFAULT]
transport_url = fake:/
[controller]
interval_s = %(interval_s)s
'''

NOVA_CONF = '''
[DEFAULT]
compute_driver = libvirt.LibvirtDriver
host = %(host)s
compute_monitors = %(monitors)s
'''


class TestMonitorInNovaCompute(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir())

    def _probe(self, monitors='cpu.iothrottle', iothrottle_conf=None,
               env=None):
        """Run the probe; returns its facts."""
        nova_conf = self.tmp.join('nova.conf')
        with open(nova_conf, 'w') as f:
            f.write(NOVA_CONF % {'host': NOVA_HOST, 'monitors': monitors})
        conf_path = self.tmp.join('iothrottle.conf')
        with open(conf_path, 'w') as f:
            f.write(iothrottle_conf if iothrottle_conf is not None
                    else IOTHROTTLE_CONF % {'interval_s': INTERVAL_S})
        proc_env = dict(os.environ, IOTHROTTLE_CONFIG_FILE=conf_path,
                        PYTHONWARNINGS='ignore')
        proc_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, '-c', PROBE_COMMAND, '--config-file',
             nova_conf],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=PROBE_TIMEOUT_S, cwd=os.getcwd(), env=proc_env)
        self.assertEqual(0, proc.returncode, proc.stdout)
        lines = [line for line in proc.stdout.splitlines()
                 if line.startswith(MARK)]
        self.assertEqual(1, len(lines), proc.stdout)
        return json.loads(lines[0][len(MARK):])

    def _errors(self, facts):
        return [line for line in facts['log'] if line.startswith('ERROR')]

    def assert_cpu_metrics(self, facts):
        self.assertEqual(10, len(facts['metric_names']))
        self.assertEqual(facts['metric_names'], facts['metrics'])

    def test_handler_loads_the_monitor_and_the_agent_collects(self):
        facts = self._probe()
        self.assertEqual(['iothrottle.nova.monitor.Monitor'],
                         facts['monitors'])
        self.assertEqual([True], facts['virt_driver_monitors'])
        self.assert_cpu_metrics(facts)
        agent = facts['agent']
        self.assertTrue(agent['stepped'])
        self.assertEqual([], agent['errors'])
        self.assertEqual(NOVA_HOST, agent['host'])
        self.assertTrue(agent['shares_nova_connection'])
        # The leftover cap was found on Nova's connection and restored.
        self.assertEqual(['%s/vda' % agent['uuid']], agent['restored'])
        self.assertEqual(0, agent['live_iops_after'])
        self.assertTrue(agent['stopped'])
        self.assertEqual([], facts['agent_threads'])
        self.assertEqual([], self._errors(facts))

    def test_eventlet_never_imported(self):
        facts = self._probe()
        self.assertTrue(facts['agent']['stepped'])
        self.assertFalse(facts['eventlet'])

    def test_broken_config_logs_one_error_and_cpu_metrics_flow(self):
        facts = self._probe(iothrottle_conf=textwrap.dedent('''
            [controller]
            interval_s = fast
            '''))
        self.assertEqual(['iothrottle.nova.monitor.Monitor'],
                         facts['monitors'])
        self.assertIsNone(facts['agent'])
        self.assert_cpu_metrics(facts)
        errors = self._errors(facts)
        self.assertEqual(1, len(errors), facts['log'])
        self.assertIn('iothrottle agent not started', errors[0])
        self.assertIn('interval_s', errors[0])
        self.assertIn("could not convert string to float: 'fast'",
                      errors[0])

    def test_missing_config_file_logs_one_error(self):
        facts = self._probe(env={'IOTHROTTLE_CONFIG_FILE':
                                 self.tmp.join('absent.conf')})
        self.assertIsNone(facts['agent'])
        self.assert_cpu_metrics(facts)
        errors = self._errors(facts)
        self.assertEqual(1, len(errors), facts['log'])
        self.assertIn('Failed to find some config files', errors[0])

    def test_not_enabled_means_no_agent(self):
        # stevedore builds every monitor of the group before Nova's check
        # drops ours: nothing may start then.
        facts = self._probe(monitors='cpu.virt_driver')
        self.assertEqual(
            ['nova.compute.monitors.cpu.virt_driver.Monitor'],
            facts['monitors'])
        self.assertIsNone(facts['agent'])
        self.assertEqual([], facts['agent_threads'])
        self.assert_cpu_metrics(facts)
        self.assertEqual([], self._errors(facts))

    def test_nova_compute_on_eventlet_gets_no_agent(self):
        # Nova 34 still runs on eventlet when asked to (deprecated).
        facts = self._probe(env={'OS_NOVA_DISABLE_EVENTLET_PATCHING':
                                 'false'})
        self.assertIsNone(facts['agent'])
        self.assertEqual([], facts['agent_threads'])
        self.assert_cpu_metrics(facts)
        errors = self._errors(facts)
        self.assertEqual(1, len(errors), facts['log'])
        self.assertIn('nova-compute runs on eventlet', errors[0])
