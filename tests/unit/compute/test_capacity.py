"""Storage domain capacity from the [storage] options."""

import textwrap

import fixtures
from oslo_config import cfg
import testtools

from iothrottle.compute import capacity
from iothrottle import conf as iothrottle_conf
from iothrottle.controller import model


class TestParseEntry(testtools.TestCase):

    def test_key_with_colons_split_at_the_last_one(self):
        self.assertEqual(
            ('nbd+unix:///run/store.sock', model.Capacity(100, 1e9)),
            capacity.parse_entry('nbd+unix:///run/store.sock:100/1e9'))
        self.assertEqual(
            ('local:cmp1:sda', model.Capacity(150, 2e8)),
            capacity.parse_entry('local:cmp1:sda:150/2e8'))

    def test_malformed_entries_named(self):
        for entry in ('nbd+unix:///s.sock', 'k:100', 'k:x/1', 'k:0/1',
                      ':1/2'):
            exc = self.assertRaises(ValueError, capacity.parse_entry, entry)
            self.assertIn(repr(entry), str(exc))
            self.assertIn('[storage] domain_capacity', str(exc))

    def test_duplicate_domain(self):
        exc = self.assertRaises(ValueError, capacity.parse_entries,
                                ['a:1/2', 'a:3/4'])
        self.assertIn("'a' is given twice", str(exc))


class TestCapacityTable(testtools.TestCase):

    def _conf(self, text):
        path = self.useFixture(fixtures.TempDir()).join('i.conf')
        with open(path, 'w') as stream:
            stream.write(textwrap.dedent(text))
        conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(conf)
        conf([], default_config_files=[path])
        return conf

    def test_named_and_default(self):
        table = capacity.CapacityTable.from_conf(self._conf('''
            [storage]
            default_max_iops = 80
            default_max_bytes_sec = 9e7
            domain_capacity = nbd+unix:///run/a.sock:300/4e8,rbd:vol:9/10
            '''))
        self.assertEqual(model.Capacity(300, 4e8),
                         table.capacity_of('nbd+unix:///run/a.sock'))
        self.assertEqual(model.Capacity(9, 10),
                         table.capacity_of('rbd:vol'))
        self.assertEqual(model.Capacity(80, 9e7),
                         table.capacity_of('local:h:sda'))

    def test_dictopt_duplicate_scheme_is_one_line_error(self):
        conf = self._conf('''
            [storage]
            domain_capacity = nbd+unix:///a.sock:1/2,nbd+unix:///b.sock:3/4
            ''')
        exc = self.assertRaises(ValueError,
                                capacity.CapacityTable.from_conf, conf)
        self.assertIn('[storage] domain_capacity', str(exc))
        self.assertNotIn('\n', str(exc))

    def test_malformed_entry_error(self):
        conf = self._conf('''
            [storage]
            domain_capacity = nbd+unix:///a.sock:fast/2
            ''')
        exc = self.assertRaises(ValueError,
                                capacity.CapacityTable.from_conf, conf)
        self.assertIn("'nbd+unix:///a.sock:fast/2'", str(exc))
