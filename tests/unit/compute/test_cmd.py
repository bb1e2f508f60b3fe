"""iothrottle-compute: bad input ends in one line and an exit code."""

import io
import sys
import textwrap

import fixtures
import testtools

from iothrottle.cmd import compute as cmd


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
