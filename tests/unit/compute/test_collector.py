"""The collector shell with a hand-written fake libvirt connection."""

import fixtures
import libvirt
import testtools

from iothrottle.compute import collector

XML = """<domain><name>%(name)s</name><uuid>%(uuid)s</uuid>
<metadata><nova:instance
 xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
<nova:name>%(name)s-nova</nova:name><nova:flavor name="m1.small"/>
</nova:instance></metadata>
<devices><disk type='network'><source protocol='nbd'>
<host transport='unix' socket='/run/s.sock'/></source>
<target dev='vda'/></disk></devices></domain>"""


class FakeError(libvirt.libvirtError):
    """A libvirtError that does not pick up libvirt's last real error."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.err = None


class FakeDom:

    def __init__(self, uuid, name):
        self.uuid, self._name, self.id = uuid, name, 1
        self.xml_calls = 0
        self.vanished = False
        self.wr_reqs = 0

    def UUIDString(self):
        return self.uuid

    def name(self):
        return self._name

    def ID(self):
        return self.id

    def XMLDesc(self, flags):
        self.xml_calls += 1
        if self.vanished:
            raise FakeError('Domain not found')
        return XML % {'name': self._name, 'uuid': self.uuid}

    def record(self):
        return {'block.count': 1, 'block.0.name': 'vda',
                'block.0.rd.reqs': 0, 'block.0.wr.reqs': self.wr_reqs,
                'block.0.wr.bytes': self.wr_reqs * 4096,
                'block.0.wr.times': self.wr_reqs * 10 ** 6}


class FakeConn:

    def __init__(self, *doms):
        self.doms = list(doms)
        self.calls = 0
        self.broken = False

    def getAllDomainStats(self, stats, flags):
        self.calls += 1
        self.groups = stats
        if self.broken:
            raise FakeError('connection reset')
        return [(dom, dom.record()) for dom in self.doms]


class CollectorCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.logger = self.useFixture(fixtures.FakeLogger(name='iothrottle'))
        self.a, self.b = FakeDom('a', 'vm-a'), FakeDom('b', 'vm-b')
        self.conn = FakeConn(self.a, self.b)
        self.now = 0.0
        self.collector = collector.Collector(self.conn, host='h',
                                             clock=lambda: self.now)

    def _collect(self, advance_s=1.0):
        self.now += advance_s
        return self.collector.collect()


class TestCollector(CollectorCase):

    def test_one_stats_call_per_interval_and_labelled_samples(self):
        self.assertEqual((), self._collect().samples)
        self.a.wr_reqs = 50
        collection = self._collect(2.0)
        self.assertEqual(2, self.conn.calls)
        by_uuid = {s.instance_uuid: s for s in collection.samples}
        self.assertEqual(25.0, by_uuid['a'].write_iops)
        self.assertEqual('nbd+unix:///run/s.sock',
                         by_uuid['a'].storage_domain)
        self.assertEqual('vm-a-nova', by_uuid['a'].instance_name)
        self.assertEqual('m1.small', by_uuid['a'].flavor)
        self.assertEqual(0.0, by_uuid['b'].iops)

    def test_xml_fetched_once_then_again_after_restart(self):
        for _ in range(3):
            self._collect()
        self.assertEqual(1, self.a.xml_calls)
        self.a.id = 2
        self._collect()
        self._collect()
        self.assertEqual(2, self.a.xml_calls)

    def test_vanished_domain_logged_once_others_collected(self):
        self._collect()
        self.b.id = 7   # restarted: its XML is read again ...
        self.b.vanished = True   # ... but it is gone by then
        for _ in range(3):
            collection = self._collect()
            self.assertEqual(['a'], [s.instance_uuid
                                     for s in collection.samples])
            self.assertEqual(1, len(collection.errors))
            self.assertIn('vm-b', collection.errors[0])
        self.assertEqual(1, self.logger.output.count('vm-b'))

    def test_stats_call_failure_gives_empty_collection(self):
        self.conn.broken = True
        collection = self._collect()
        self.assertEqual((), collection.samples)
        self.assertIn('connection reset', collection.errors[0])
        self.assertTrue(collection.unreadable)
        self.conn.broken = False
        self.assertFalse(self._collect().unreadable)
        self.assertEqual(2, len(self._collect().samples))


class TestBlockDeviceOf(testtools.TestCase):

    def test_missing_path(self):
        self.assertEqual('unresolved',
                         collector.block_device_of('/nonexistent/disk'))

    def test_file_system_without_block_device(self):
        # /proc has no block device behind it: major 0.
        self.assertTrue(collector.block_device_of('/proc/self/stat')
                        .startswith('0:'))


class TestCheck(CollectorCase):
    """A check within an interval: samples since the last collection or
    check, and the interval's own collection left whole."""

    def _check(self, wr_reqs, advance_s=0.5):
        """A's samples by uuid from a check ``advance_s`` on, a's
        counter at ``wr_reqs``."""
        self.a.wr_reqs = wr_reqs
        self.now += advance_s
        return {s.instance_uuid: s for s in self.collector.check().samples}

    def test_checks_chain_and_the_collection_spans_the_interval(self):
        self._collect()
        first = self._check(10)
        self.assertEqual(0.5, first['a'].interval_s)
        self.assertEqual(20.0, first['a'].write_iops)
        self.assertEqual(10.0, self._check(15)['a'].write_iops)
        self.a.wr_reqs = 40
        whole = {s.instance_uuid: s for s in self._collect(1.0).samples}
        self.assertEqual(2.0, whole['a'].interval_s)
        self.assertEqual(20.0, whole['a'].write_iops)
        self.assertEqual(10.0, self._check(45)['a'].write_iops)

    def test_a_check_reads_the_disk_counters_only(self):
        self._collect()
        self.assertEqual(collector.STATS_GROUPS, self.conn.groups)
        self._check(5)
        self.assertEqual(libvirt.VIR_DOMAIN_STATS_BLOCK, self.conn.groups)

    def test_a_check_before_any_collection_has_no_samples(self):
        self.now += 1.0
        self.assertEqual((), self.collector.check().samples)
        # The first collection is still the first sight, and the one
        # after it measures from it, not from the check.
        self.a.wr_reqs = 6
        self.assertEqual((), self._collect().samples)
        self.a.wr_reqs = 10
        samples = {s.instance_uuid: s for s in self._collect(2.0).samples}
        self.assertEqual(2.0, samples['a'].write_iops)
