"""The store's slowdown: the file the bench writes and the plugin reads
(the plugin runs inside nbdkit; its pure parts are tested here)."""

import os

import fixtures
import testtools

from iothrottle.testbed import store
from iothrottle.testbed import store_plugin


class TestSlowDown(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.store = store.NbdStore(self.workdir, delay_ms=10.0)
        self.useFixture(fixtures.MonkeyPatch(
            'iothrottle.testbed.store_plugin.PARAMS',
            dict(store_plugin.PARAMS,
                 slowdown_file=self.store.slowdown_file)))
        self.useFixture(fixtures.MonkeyPatch(
            'iothrottle.testbed.store_plugin._slowdown',
            {'mtime_ns': None, 'factor': 1.0}))

    def test_the_plugin_is_told_where_the_factor_is(self):
        self.assertIn('slowdown_file=%s' % self.store.slowdown_file,
                      self.store.command())

    def test_the_plugin_serves_at_the_factor_the_store_wrote(self):
        self.assertEqual(1.0, store_plugin._factor())
        self.store.slow_down(2.0)
        self.assertEqual(2.0, store_plugin._factor())
        self.store.slow_down(1)
        self.assertFalse(os.path.exists(self.store.slowdown_file))
        self.assertEqual(1.0, store_plugin._factor())

    def test_a_factor_that_is_no_slowdown_is_refused(self):
        for factor in (0.5, float('nan'), float('inf'), '2', None):
            self.assertRaises(ValueError, self.store.slow_down, factor)
        self.assertFalse(os.path.exists(self.store.slowdown_file))

    def test_the_plugin_ignores_a_factor_it_cannot_use(self):
        for text in ('fast', '0.5', 'nan', 'inf', ''):
            self.assertIsNone(store_plugin.parse_factor(text), text)
        with open(self.store.slowdown_file, 'w') as f:
            f.write('garbage\n')
        stderr = self.useFixture(fixtures.StringStream('stderr'))
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', stderr.stream))
        self.assertEqual(1.0, store_plugin._factor())
        self.assertIn("'garbage'", stderr.getDetails()['stderr'].as_text())

    def test_the_seek_disk_has_no_slowdown(self):
        seek = store.SeekDiskStore(self.workdir)
        self.assertRaises(store.StoreError, seek.slow_down, 2.0)
