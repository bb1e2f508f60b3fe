"""etc/systemd/: the units of a non-devstack install.

Each unit starts a console script that setup.cfg declares, with the
configuration file the services read by default, comes back after a
crash (``Restart=on-failure``) and is ordered after what it needs on
the same host.  Where ``systemd-analyze`` exists (Debian 12 has it), it
verifies the unit with ExecStart pointed at this interpreter's scripts.
"""

import configparser
import os
import pathlib
import shutil
import subprocess
import sys

import fixtures
import testtools

REPO = pathlib.Path(__file__).resolve().parents[2]
UNIT_DIR = REPO / 'etc' / 'systemd'
INSTALLED_BIN = '/usr/local/bin/'
CONFIG_FILE = '/etc/iothrottle/iothrottle.conf'


def read_unit(name):
    # strict=False: systemd allows a key more than once (Wants=, After=).
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read(UNIT_DIR / name)
    return parser


def console_scripts():
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO / 'setup.cfg')
    scripts = {}
    for line in parser['entry_points']['console_scripts'].splitlines():
        name, sep, target = line.partition('=')
        if sep:
            scripts[name.strip()] = target.strip()
    return scripts


class TestUnits(testtools.TestCase):

    def check_unit(self, name, script, after):
        unit = read_unit(name)
        service = unit['Service']
        argv = service['ExecStart'].split()
        self.assertEqual(INSTALLED_BIN + script, argv[0])
        self.assertIn(script, console_scripts())
        self.assertEqual(['--config-file', CONFIG_FILE], argv[1:])
        self.assertEqual('on-failure', service['Restart'])
        self.assertEqual('iothrottle', service['User'])
        ordered = unit['Unit']['After'].split()
        for dependency in after:
            self.assertIn(dependency, ordered)
        for wanted in unit['Unit']['Wants'].split():
            self.assertIn(wanted, ordered, 'wanted but not ordered')
        self.assertEqual('multi-user.target', unit['Install']['WantedBy'])
        self.verify(name, script)
        return unit

    def verify(self, name, script):
        """systemd-analyze verify, the script in this interpreter's bin."""
        analyze = shutil.which('systemd-analyze')
        if analyze is None:
            return
        bin_dir = os.path.dirname(sys.executable)
        if not os.path.exists(os.path.join(bin_dir, script)):
            self.fail('%s is not installed in %s (pip install -e .)'
                      % (script, bin_dir))
        tmp = self.useFixture(fixtures.TempDir()).path
        text = (UNIT_DIR / name).read_text().replace(INSTALLED_BIN,
                                                     bin_dir + '/')
        path = os.path.join(tmp, name)
        with open(path, 'w') as stream:
            stream.write(text)
        done = subprocess.run([analyze, 'verify', path],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        # Only this unit's lines: the host's own units may warn too.
        own = [line for line in done.stdout.splitlines() if name in line]
        self.assertEqual((0, []), (done.returncode, own), done.stdout)

    def test_conductor(self):
        self.check_unit('iothrottle-conductor.service',
                        'iothrottle-conductor',
                        ['network-online.target', 'rabbitmq-server.service',
                         'mariadb.service'])

    def test_compute_agent(self):
        unit = self.check_unit('iothrottle-compute.service',
                               'iothrottle-compute',
                               ['network-online.target', 'libvirtd.service',
                                'rabbitmq-server.service'])
        self.assertEqual('libvirt', unit['Service']['SupplementaryGroups'])

    def test_api(self):
        if 'iothrottle-api' not in console_scripts():
            self.skipTest('setup.cfg declares no iothrottle-api console '
                          'script (the operator API) for the unit to start')
        self.check_unit('iothrottle-api.service', 'iothrottle-api',
                        ['network-online.target', 'mariadb.service'])

    def test_every_unit_is_checked(self):
        self.assertEqual(
            ['iothrottle-api.service', 'iothrottle-compute.service',
             'iothrottle-conductor.service'],
            sorted(path.name for path in UNIT_DIR.iterdir()))
