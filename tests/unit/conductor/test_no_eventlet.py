"""Every iothrottle service runs without ever importing eventlet.

Each service module's ``main`` runs in a fresh interpreter (fake://
message bus, libvirt's test driver) for a couple of seconds; then the
subprocess reports whether eventlet is in ``sys.modules``.
"""

import os
import subprocess
import sys
import textwrap

import fixtures
import testtools

SCRIPT = textwrap.dedent('''
    import os, sys, threading, time
    import importlib
    module = importlib.import_module(sys.argv[1])
    thread = threading.Thread(target=module.main, args=(sys.argv[2:],),
                              daemon=True)
    thread.start()
    time.sleep(3)
    print('alive=%s eventlet=%s' % (thread.is_alive(),
                                    'eventlet' in sys.modules))
    sys.stdout.flush()
    os._exit(0)
''')


class TestNoEventlet(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir())
        tiers = self.tmp.join('tiers.yaml')
        with open(tiers, 'w') as f:
            f.write('tiers: {gold: {min_iops: 10}}\n'
                    'flavors: {m1.gold: gold}\n')
        self.conf = self.tmp.join('iothrottle.conf')
        with open(self.conf, 'w') as f:
            f.write(textwrap.dedent('''
                [DEFAULT]
                transport_url = fake:/
                [compute]
                libvirt_uri = test:///default
                [conductor]
                guarantees = file
                tiers_file = %s
                [database]
                connection = sqlite:///%s
                ''' % (tiers, self.tmp.join('db.sqlite'))))

    def _run(self, module):
        proc = subprocess.run(
            [sys.executable, '-c', SCRIPT, module, '--config-file',
             self.conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=60, cwd=os.getcwd())
        self.assertEqual(0, proc.returncode, proc.stdout)
        self.assertIn('alive=True eventlet=False', proc.stdout)

    def test_conductor(self):
        self._run('iothrottle.cmd.conductor')

    def test_compute_agent_in_conductor_mode(self):
        self._run('iothrottle.cmd.compute')
