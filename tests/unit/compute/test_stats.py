"""Counter snapshots and per-interval rates."""

import testtools

from iothrottle.compute import stats

UUID_A = 'aaaaaaaa-0000-0000-0000-000000000001'
UUID_B = 'bbbbbbbb-0000-0000-0000-000000000002'


def _record(*disks, balloon=None, state=1):
    """A getAllDomainStats record; each disk is (name, rd, wr, times)."""
    record = {'state.state': state, 'block.count': len(disks)}
    for index, (name, rd_reqs, wr_reqs, times_ns) in enumerate(disks):
        prefix = 'block.%d.' % index
        record.update({
            prefix + 'name': name, prefix + 'path': '/img/%s' % name,
            prefix + 'rd.reqs': rd_reqs, prefix + 'rd.bytes': rd_reqs * 4096,
            prefix + 'rd.times': times_ns,
            prefix + 'wr.reqs': wr_reqs,
            prefix + 'wr.bytes': wr_reqs * 65536,
            prefix + 'wr.times': times_ns,
            prefix + 'fl.reqs': 0, prefix + 'fl.times': 0})
    record.update(balloon or {})
    return record


def _snap(at_s, **domains):
    return stats.snapshot(at_s, [(uuid, 'dom-' + uuid[:1], record)
                                 for uuid, record in domains.items()])


def _by_disk(samples):
    return {s.disk_id: s for s in samples}


class TestSnapshot(testtools.TestCase):

    def test_freezes_counters_and_balloon(self):
        snap = _snap(10.0, a=_record(
            ('vda', 5, 7, 100), balloon={'balloon.current': 1024,
                                         'balloon.disk_caches': 300,
                                         'balloon.rss': 900}))
        domain = snap.domains['a']
        self.assertEqual(7, domain.disk('vda').wr_reqs)
        self.assertEqual(7 * 65536, domain.disk('vda').wr_bytes)
        self.assertEqual('/img/vda', domain.disk('vda').path)
        self.assertEqual(300, domain.balloon.disk_caches_kib)
        self.assertEqual(900, domain.balloon.rss_kib)
        self.assertIsNone(domain.balloon.usable_kib)

        def mutate():
            snap.domains['x'] = None
        self.assertRaises(TypeError, mutate)

    def test_disk_without_counters_left_out(self):
        record = _record(('vda', 1, 1, 1))
        record.update({'block.count': 2, 'block.1.name': 'sda'})
        self.assertEqual(['vda'], [d.device for d in
                                   _snap(0, a=record).domains['a'].disks])


class TestSamples(testtools.TestCase):

    def test_rates_and_latency(self):
        labels = {('a', 'vda'): stats.DiskLabel('nbd+unix:///s', 'web',
                                                'm1.small')}
        before = _snap(100.0, a=_record(('vda', 10, 20, 1000000)))
        after = _snap(102.0, a=_record(('vda', 30, 80, 41000000)))
        (sample,) = stats.samples(before, after, labels)
        self.assertEqual(2.0, sample.interval_s)
        self.assertEqual(10.0, sample.read_iops)
        self.assertEqual(30.0, sample.write_iops)
        self.assertEqual(10 * 4096, sample.read_bytes_sec)
        self.assertEqual(30 * 65536, sample.write_bytes_sec)
        # 80 ms of request time (read + write) over 80 requests.
        self.assertAlmostEqual(0.001, sample.latency_s)
        self.assertEqual('nbd+unix:///s', sample.storage_domain)
        self.assertEqual('web', sample.instance_name)
        self.assertEqual('m1.small', sample.flavor)

    def test_idle_disk_has_zero_rates_and_latency(self):
        before = _snap(0.0, a=_record(('vda', 5, 5, 50)))
        after = _snap(5.0, a=_record(('vda', 5, 5, 50)))
        (sample,) = stats.samples(before, after)
        self.assertEqual(0.0, sample.iops)
        self.assertEqual(0.0, sample.latency_s)

    def test_first_sight_is_baseline_only(self):
        before = _snap(0.0, a=_record(('vda', 1, 1, 1)))
        after = _snap(1.0, a=_record(('vda', 2, 2, 2), ('vdb', 9, 9, 9)),
                      b=_record(('vda', 50, 50, 50)))
        self.assertEqual(['a/vda'], sorted(_by_disk(
            stats.samples(before, after))))
        self.assertEqual((), stats.samples(None, after))

    def test_counter_reset_gives_no_sample_then_new_baseline(self):
        first = _snap(0.0, a=_record(('vda', 1000, 1000, 10 ** 9)))
        reset = _snap(1.0, a=_record(('vda', 3, 1200, 10 ** 9)))
        later = _snap(2.0, a=_record(('vda', 13, 1300, 2 * 10 ** 9)))
        self.assertEqual((), stats.samples(first, reset))
        (sample,) = stats.samples(reset, later)
        self.assertEqual(10.0, sample.read_iops)
        self.assertEqual(100.0, sample.write_iops)

    def test_vanished_domain_and_disk_dropped(self):
        before = _snap(0.0, a=_record(('vda', 1, 1, 1), ('vdb', 1, 1, 1)),
                       b=_record(('vda', 1, 1, 1)))
        after = _snap(1.0, a=_record(('vda', 2, 2, 2)))
        self.assertEqual(['a/vda'], list(_by_disk(
            stats.samples(before, after))))

    def test_no_time_passed_no_samples(self):
        snap = _snap(3.0, a=_record(('vda', 1, 1, 1)))
        self.assertEqual((), stats.samples(snap, snap))
