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

import subprocess
import sys
import tempfile

import libvirt
import testtools

from iothrottle.bench import demo
from iothrottle.bench import report
from iothrottle.bench import runner
from iothrottle.bench import seed000
from iothrottle.bench import services as services_mod
from iothrottle.controller import model
from iothrottle import testbed

PREFIX = 'itb-mh-'
HOSTS = {'mh-a': ('vm1', 'vm2'), 'mh-b': ('vm3', 'vm4')}


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
        services_mod.ensure_rabbitmq()
        self.workdir = tempfile.mkdtemp(prefix='iothrottle-mh-')
        self.services = services_mod.Services(self.workdir)
        self.addCleanup(self.services.close)

    def start_services(self, plan, tb, capacity):
        conductor_conf, common = self.services.write_control_plane(
            plan, tb, capacity, 'sqlite:///%s/db.sqlite' % self.workdir)
        self.services.manage(conductor_conf, 'db', 'sync')
        self.services.conductor(conductor_conf)
        for host, vms in HOSTS.items():
            self.services.agent(host, self.services.write_conf(
                host, common + '\n[agent]\nhost = %s\nowned_domains = %s\n'
                % (host, ','.join(PREFIX + vm for vm in vms))))
        self.services.start()
        return conductor_conf

    def stop_services(self):
        codes = self.services.stop()
        self.assertEqual({name: 0 for name in codes}, codes,
                         self.services.logs())

    def test_guarantees_hold_across_two_hosts(self):
        plan = seed000.default_plan(short=True)
        run = runner.Seed000Run(plan, sys.stdout, prefix=PREFIX)
        with testbed.Testbed(run.guests(), delay_ms=plan.delay_ms,
                             prefix=PREFIX) as tb:
            conn = libvirt.open(tb.uri)
            self.addCleanup(conn.close)
            capacity = run.calibrate(tb, conn)
            observer = run.observer(conn, capacity)
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
        self.assertTrue(met, '%s\n%s' % (reasons, self.services.logs()))
