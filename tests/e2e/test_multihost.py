"""The seed-000 bar with the guests split across two compute hosts.

Four testbed guests on one nbdkit store; two ``iothrottle-compute``
processes in conductor mode (``[agent] host`` mh-a owns vm1 and vm2,
mh-b owns vm3 and vm4), one ``iothrottle-conductor`` with the
``guarantee`` policy, all over the real RabbitMQ, guarantees from a
tiers file, decisions in a SQLite database.  The test only observes: a
read-only collector on the tick grid, and each disk's live
``blockIoTune`` as its cap.  ``none`` is the same short plan in the same
testbed before any service runs.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import libvirt
import testtools
import yaml

from iothrottle.bench import demo
from iothrottle.bench import report
from iothrottle.bench import runner
from iothrottle.bench import seed000
from iothrottle.controller import model
from iothrottle import testbed
from tests import rabbit

PREFIX = 'itb-mh-'
HOSTS = {'mh-a': ('vm1', 'vm2'), 'mh-b': ('vm3', 'vm4')}
# Seconds the services may take to start consuming their queues.
READY_DEADLINE_S = 60.0
# Seconds a service may take to stop after SIGTERM (it lifts its caps).
STOP_DEADLINE_S = 30.0


def _consumed_queues():
    """Names of RabbitMQ queues that have at least one consumer."""
    out = subprocess.run(
        ['rabbitmqctl', '-q', 'list_queues', 'name', 'consumers'],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        check=False).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and int(parts[1]) > 0:
            names.add(parts[0])
    return names


def _live_caps(conn):
    def caps_of(names):
        caps = {}
        for uuid in names:
            iops = demo.live_caps(conn, uuid)
            if iops:
                caps['%s/vda' % uuid] = model.Cap(iops, 0)
        return caps
    return caps_of


class TestMultiHost(testtools.TestCase):

    def setUp(self):
        super().setUp()
        rabbit.ensure_rabbitmq()
        self.workdir = tempfile.mkdtemp(prefix='iothrottle-mh-')
        self.services = []

    def write_conf(self, name, body):
        path = os.path.join(self.workdir, '%s.conf' % name)
        with open(path, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = %s\n%s'
                    % (rabbit.URL, body))
        return path

    def common_conf(self, plan, tb):
        return ('[compute]\nlibvirt_uri = %s\n\n[controller]\n'
                'policy = guarantee\ninterval_s = %s\nlease_s = %s\n\n'
                '[database]\nconnection = sqlite:///%s/db.sqlite\n' % (
                    tb.uri, plan.interval_s, plan.lease_s, self.workdir))

    def start(self, name, module, conf_path):
        log = os.path.join(self.workdir, '%s.log' % name)
        proc = subprocess.Popen(
            [sys.executable, '-m', module, '--config-file', conf_path,
             '--log-file', log], stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT)
        self.services.append((name, proc, log))
        self.addCleanup(self._kill, proc)
        return proc

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def logs(self):
        tails = []
        for name, _proc, log in self.services:
            try:
                with open(log) as f:
                    tails.append('== %s\n%s' % (name, f.read()[-1500:]))
            except OSError:
                pass
        return '\n'.join(tails)

    def start_services(self, plan, tb, capacity):
        tiers_path = os.path.join(self.workdir, 'tiers.yaml')
        with open(tiers_path, 'w') as f:
            yaml.safe_dump({'tiers': {}, 'flavors': {
                vm.flavor: {'min_bytes_sec': vm.guarantee_kb_s * 1024}
                for vm in plan.vms}}, f)
        common = self.common_conf(plan, tb)
        conductor_conf = self.write_conf('conductor', common + (
            '\n[conductor]\nguarantees = file\ntiers_file = %s\n\n'
            '[storage]\ndomain_capacity = %s:%.1f/%.0f\n' % (
                tiers_path, tb.store.domain_key, capacity.max_iops,
                capacity.max_bytes_sec)))
        subprocess.run([sys.executable, '-m', 'iothrottle.cmd.manage',
                        '--config-file', conductor_conf, 'db', 'sync'],
                       check=True, stdout=subprocess.DEVNULL)
        self.start('conductor', 'iothrottle.cmd.conductor', conductor_conf)
        for host, vms in HOSTS.items():
            conf = self.write_conf(host, common + (
                '\n[agent]\nhost = %s\nowned_domains = %s\n' % (
                    host, ','.join(PREFIX + vm for vm in vms))))
            self.start(host, 'iothrottle.cmd.compute', conf)
        want = {'iothrottle-conductor'} | {
            'iothrottle-compute.%s' % host for host in HOSTS}
        deadline = time.monotonic() + READY_DEADLINE_S
        while not want <= _consumed_queues():
            for name, proc, _log in self.services:
                self.assertIsNone(proc.poll(), '%s exited:\n%s'
                                  % (name, self.logs()))
            self.assertLess(time.monotonic(), deadline,
                            'services not consuming their queues:\n%s'
                            % self.logs())
        return conductor_conf

    def stop_services(self):
        for _name, proc, _log in self.services:
            proc.send_signal(signal.SIGTERM)
        for name, proc, _log in self.services:
            self.assertEqual(0, proc.wait(timeout=STOP_DEADLINE_S),
                             '%s:\n%s' % (name, self.logs()))

    def test_guarantees_hold_across_two_hosts(self):
        plan = seed000.default_plan(short=True)
        run = runner.Seed000Run(plan, sys.stdout, prefix=PREFIX)
        with testbed.Testbed(run.guests(), delay_ms=plan.delay_ms,
                             prefix=PREFIX) as tb:
            conn = libvirt.open(tb.uri)
            self.addCleanup(conn.close)
            capacity = run.calibrate(tb, conn)
            observer = run.agent(conn, 'none', capacity)
            caps_of = _live_caps(conn)
            row = report.live_row(sys.stdout, plan)
            results = {'none': seed000.summarize(
                plan, run.observe(tb, observer, 'none', on_interval=row,
                                  caps_of=caps_of))}
            conductor_conf = self.start_services(plan, tb, capacity)
            intervals = run.observe(tb, observer, 'guarantee',
                                    on_interval=row, caps_of=caps_of)
            capped = sum(1 for i in intervals if i.caps.get('vm1'))
            self.stop_services()
            uuids = {vm.name: tb.instance_uuid(vm.name) for vm in plan.vms}
            # The agents lifted their caps as they stopped.
            self.assertEqual({}, caps_of(uuids.values()))
            why = subprocess.run(
                [sys.executable, '-m', 'iothrottle.cmd.manage',
                 '--config-file', conductor_conf, 'throttle', 'why',
                 uuids['vm1']], stdout=subprocess.PIPE, text=True,
                check=True).stdout
        results['guarantee'] = seed000.summarize(plan, intervals)
        sys.stdout.write(report.seed000_table(results) + '\n' + why)
        self.assertGreater(capped, 0, 'the conductor never capped vm1')
        self.assertIn('cap', why)
        worst_none = min(r['satisfied_fraction']
                         for r in results['none']['vms'])
        # Without control the burster really hurts a neighbour.
        self.assertLess(worst_none, 0.95, results['none'])
        met, reasons = seed000.bar(results)
        self.assertTrue(met, '%s\n%s' % (reasons, self.logs()))
