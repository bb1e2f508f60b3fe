"""iothrottle-compute: bad input ends in one line and an exit code."""

import io
import sys
import textwrap

import fixtures
import testtools

from iothrottle.cmd import compute as cmd
from iothrottle import tiers as tiers_mod


class TestMain(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir())
        self.stderr = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', self.stderr))

    def _file(self, name, text):
        path = self.tmp.join(name)
        with open(path, 'w') as stream:
            stream.write(textwrap.dedent(text))
        return path

    def _main(self, *argv):
        return cmd.main(list(argv) + ['--config-dir', self.tmp.path])

    def _refused(self, controller_text, message):
        """``iothrottle-compute`` with ``[controller]`` options
        ``controller_text`` fails with ``message`` as its one line."""
        conf = self._file('iothrottle.conf',
                          '[controller]\n' + textwrap.dedent(
                              controller_text))
        self.assertNotEqual(0, cmd.main(['--config-file', conf]))
        self.assertEqual('iothrottle-compute: %s\n' % message,
                         self.stderr.getvalue())

    def test_lease_not_longer_than_the_interval_is_refused(self):
        # Issue 9 item 12: lease_s <= interval_s was accepted and made
        # caps lapse before their renewal.
        self._refused('''
            interval_s = 5
            lease_s = 5
            ''', '[controller] lease_s (5 s) must exceed interval_s (5 s)')

    def test_a_check_as_long_as_the_interval_is_refused(self):
        self._refused('''
            interval_s = 2
            idle_check_s = 2
            ''', ('[controller] idle_check_s (2 s) must be less than '
                  'interval_s (2 s); 0 turns the checks off'))

    def test_conductor_mode_with_unreachable_libvirt(self):
        conf = self._file('iothrottle.conf', '''
            [compute]
            libvirt_uri = qemu+unix:///system?socket=/nonexistent
            ''')
        self.assertEqual(1, cmd.main(['--config-file', conf]))
        line = self.stderr.getvalue()
        self.assertTrue(line.startswith(
            'iothrottle-compute: cannot connect to libvirt at '), line)
        self.assertEqual(1, line.count('\n'))

    def test_bad_tiers_file(self):
        tiers = self._file('tiers.yaml', 'tiers: {gold: {min_iops: -1}}\n')
        self.assertEqual(1, self._main('--standalone', '--tiers-file',
                                       tiers))
        self.assertEqual(
            'iothrottle-compute: %s: tiers.gold.min_iops: must be a number '
            '>= 0, got -1\n' % tiers, self.stderr.getvalue())

    def test_unreachable_libvirt(self):
        tiers = self._file('tiers.yaml', 'tiers: {}\n')
        conf = self._file('iothrottle.conf', '''
            [compute]
            libvirt_uri = qemu+unix:///system?socket=/nonexistent
            tiers_file = %s
            ''' % tiers)
        self.assertEqual(1, cmd.main(['--standalone', '--config-file',
                                      conf]))
        line = self.stderr.getvalue()
        self.assertTrue(line.startswith(
            'iothrottle-compute: cannot connect to libvirt at '
            'qemu+unix:///system?socket=/nonexistent: '), line)
        self.assertEqual(1, line.count('\n'))

    def test_malformed_domain_capacity(self):
        tiers = self._file('tiers.yaml', 'tiers: {}\n')
        conf = self._file('iothrottle.conf', '''
            [compute]
            tiers_file = %s
            [storage]
            domain_capacity = nbd+unix:///s.sock:many/1
            ''' % tiers)
        self.assertEqual(1, cmd.main(['--standalone', '--config-file',
                                      conf]))
        self.assertIn("entry 'nbd+unix:///s.sock:many/1'",
                      self.stderr.getvalue())

    def test_unknown_policy(self):
        tiers = self._file('tiers.yaml', 'tiers: {}\n')
        conf = self._file('iothrottle.conf', '''
            [compute]
            tiers_file = %s
            [controller]
            policy = clairvoyant
            ''' % tiers)
        self.assertEqual(1, cmd.main(['--standalone', '--config-file',
                                      conf]))
        self.assertIn("[controller] policy: cannot load 'clairvoyant'",
                      self.stderr.getvalue())
        self.assertEqual(1, self.stderr.getvalue().count('\n'))

    def test_missing_config_file_is_one_line(self):
        self.assertEqual(1, cmd.main(['--config-file', '/nonexistent.conf']))
        self.assertEqual(1, self.stderr.getvalue().count('\n'))
        self.assertIn('/nonexistent.conf', self.stderr.getvalue())


if __name__ == '__main__':
    sys.exit(cmd.main())


class TestLoadBalloon(testtools.TestCase):
    """The balloon agent gets the tiers file's memory floors."""

    def setUp(self):
        super().setUp()
        self.made = []
        self.useFixture(fixtures.MonkeyPatch(
            'iothrottle.compute.balloon_agent.BalloonAgent',
            lambda conf, conn, **kwargs: self.made.append(
                (conf, conn, kwargs)) or 'agent'))
        self.tiers = tiers_mod.parse_tiers(textwrap.dedent('''
            tiers: {gold: {min_iops: 100, min_memory_mb: 2048}}
            flavors:
              m1.large: gold
              db.small: {min_memory_mb: 512}
              io.only: {min_iops: 5}
            '''))

    def _conf(self, enabled):
        conf = cmd.build_conf(['--config-dir', self.useFixture(
            fixtures.TempDir()).path])
        conf.set_override('enabled', enabled, 'balloon')
        return conf

    def test_floors_handed_to_the_agent(self):
        conf = self._conf(True)
        self.assertEqual('agent', cmd.load_balloon(
            conf, 'conn', self.tiers.memory_floors()))
        self.assertEqual(
            [(conf, 'conn', {'min_memory_mb': {'db.small': 512,
                                               'm1.large': 2048}})],
            self.made)

    def test_disabled(self):
        self.assertIsNone(cmd.load_balloon(self._conf(False), 'conn',
                                           self.tiers.memory_floors()))
        self.assertEqual([], self.made)

    def test_conductor_mode_floors_come_from_the_tiers_file(self):
        conf = self._conf(True)
        path = self.useFixture(fixtures.TempDir()).join('tiers.yaml')
        conf.set_override('tiers_file', path, 'compute')
        self.assertEqual({}, cmd.conductor_mode_floors(conf))
        with open(path, 'w') as f:
            f.write('tiers: {}\nflavors: {db.small: {min_memory_mb: 512}}\n')
        self.assertEqual({'db.small': 512}, cmd.conductor_mode_floors(conf))
        with open(path, 'w') as f:
            f.write('tiers: [\n')
        self.assertRaises(cmd.CommandError, cmd.conductor_mode_floors, conf)
