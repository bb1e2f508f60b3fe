import testtools

from iothrottle.balloon import estimator

MEMINFO = ('/proc/meminfo:MemTotal:         112428 kB\n'
           '/proc/meminfo:Active(file):      20000 kB\n'
           '/proc/meminfo:Inactive(file):    20000 kB\n')


def report(procs, cache_kib=40000, extra=''):
    lines = []
    for pid, (rchar, read_bytes) in procs.items():
        lines.append('/proc/%d/io:rchar: %d' % (pid, rchar))
        lines.append('/proc/%d/io:wchar: 7' % pid)
        lines.append('/proc/%d/io:read_bytes: %d' % (pid, read_bytes))
    half = cache_kib // 2
    mem = MEMINFO.replace('20000', str(half))
    return '\n'.join(lines) + '\n' + mem + extra


class TestValidate(testtools.TestCase):

    def test_parses_processes_and_cache(self):
        c = estimator.validate(report({1: (10, 4), 42: (100, 50)}), 5.0)
        self.assertEqual(40000, c.cache_kib)
        self.assertEqual(112428, c.mem_total_kib)
        self.assertEqual({1: (10, 4), 42: (100, 50)}, dict(c.processes))

    def test_garbage_lines_are_ignored_but_meminfo_is_required(self):
        self.assertRaisesRegex(estimator.ReportError, 'no MemTotal',
                               estimator.validate, 'hello\x00world', 0.0)

    def test_cache_above_memtotal_is_refused(self):
        self.assertRaisesRegex(
            estimator.ReportError, 'exceeds MemTotal', estimator.validate,
            report({}, cache_kib=200000), 0.0)

    def test_huge_counter_is_refused(self):
        self.assertRaisesRegex(
            estimator.ReportError, 'out of range', estimator.validate,
            report({3: (1 << 62, 0)}), 0.0)

    def test_bytes_are_accepted(self):
        c = estimator.validate(report({1: (1, 1)}).encode(), 0.0)
        self.assertEqual(1, len(c.processes))


class TestEstimate(testtools.TestCase):

    def test_hits_are_reads_minus_storage_fetches(self):
        a = estimator.validate(report({7: (0, 0)}), 0.0)
        b = estimator.validate(report({7: (4096 * 1000, 4096 * 200)}), 2.0)
        e = estimator.estimate(a, b)
        self.assertEqual(800, e.hit_pages)
        self.assertEqual(10000, e.cache_pages)
        self.assertAlmostEqual(800 / 2.0 / 10000, e.utilization)

    def test_new_exited_and_reused_pids_are_left_out(self):
        a = estimator.validate(report({7: (0, 0), 8: (10 ** 9, 0)}), 0.0)
        b = estimator.validate(report({7: (4096, 0), 8: (5, 0),
                                       9: (10 ** 9, 0)}), 1.0)
        self.assertEqual(1, estimator.estimate(a, b).hit_pages)

    def test_more_storage_reads_than_reads_is_no_hit(self):
        a = estimator.validate(report({7: (0, 0)}), 0.0)
        b = estimator.validate(report({7: (4096, 4096 * 32)}), 1.0)
        self.assertEqual(0, estimator.estimate(a, b).hit_pages)

    def test_utilization_is_clamped_to_one(self):
        a = estimator.validate(report({7: (0, 0)}), 0.0)
        b = estimator.validate(report({7: (4096 * 10 ** 6, 0)}), 1.0)
        self.assertEqual(1.0, estimator.estimate(a, b).utilization)

    def test_implausible_hit_rate_is_refused(self):
        a = estimator.validate(report({7: (0, 0)}), 0.0)
        b = estimator.validate(report({7: (1 << 50, 0)}), 1.0)
        self.assertRaisesRegex(estimator.ReportError, 'not plausible',
                               estimator.estimate, a, b)

    def test_reports_out_of_order_are_refused(self):
        a = estimator.validate(report({}), 5.0)
        self.assertRaises(estimator.ReportError, estimator.estimate, a, a)


class TestReportGate(testtools.TestCase):

    def test_drops_reports_closer_than_the_interval(self):
        gate = estimator.ReportGate(1.0)
        self.assertTrue(gate.admit('vm', 0.0))
        self.assertFalse(gate.admit('vm', 0.5))
        self.assertTrue(gate.admit('other', 0.5))
        self.assertTrue(gate.admit('vm', 1.0))
        gate.forget('vm')
        self.assertTrue(gate.admit('vm', 1.1))
