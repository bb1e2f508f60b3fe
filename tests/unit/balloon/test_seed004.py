import testtools

from iothrottle.bench import seed004


def vm(name, app, disk, mb=100.0, swapped=False, oom=False):
    return seed004.VmResult(name=name, app_bytes=app, disk_bytes=disk,
                            memory_target_mb=mb, swapped=swapped, oom=oom)


def doc(rows):
    return {'runs': [seed004.run_row(ratio, [vm('vm1', 100, d1),
                                             vm('vm2', 100, d2)], reqs, 10.0)
                     for ratio, d1, d2, reqs in rows]}


class TestMetrics(testtools.TestCase):

    def test_io_reduction(self):
        self.assertEqual(0.75, seed004.io_reduction(400, 100))
        self.assertEqual(-0.5, seed004.io_reduction(100, 150))
        self.assertIsNone(seed004.io_reduction(0, 10))

    def test_run_row_is_the_issue_format_vm1_first(self):
        row = seed004.run_row(8, [vm('vm1', 400, 100, 203.04),
                                  vm('vm2', 100, 180, oom=True)], 50, 10.0)
        self.assertEqual({'ratio': 8, 'disk_read_iops': 5.0, 'vms': [
            {'name': 'vm1', 'io_reduction': 0.75, 'memory_target_mb': 203.0,
             'swapped': False, 'oom': False},
            {'name': 'vm2', 'io_reduction': -0.8, 'memory_target_mb': 100.0,
             'swapped': False, 'oom': True}]}, row)

    def test_plan_paces_vm1_ratio_times_slower(self):
        plan = seed004.default_plan()
        self.assertEqual(160.0, plan.interval_ms(0, 8))
        self.assertEqual(20.0, plan.interval_ms(1, 8))
        self.assertEqual((1, 2, 4, 8), plan.ratios)
        self.assertEqual((1,), seed004.default_plan(short=True).ratios)

    def test_hot_set_is_the_first_hot_title_pct_of_the_files(self):
        plan = seed004.default_plan()
        self.assertEqual(500.0, plan.data_mb(plan.vms[0]))
        self.assertEqual(100.0, plan.hot_mb(plan.vms[0]))


class TestBar(testtools.TestCase):

    def test_met(self):
        ok, reasons = seed004.bar({
            'cams': doc([(1, 20, 90, 100), (8, 20, 95, 100)]),
            'proportional': doc([(1, 50, 85, 100), (8, 70, 90, 120)])})
        self.assertTrue(ok, reasons)

    def test_each_failure_is_named(self):
        ok, reasons = seed004.bar({
            'cams': doc([(1, 60, 90, 100), (8, 50, 95, 130)]),
            'proportional': doc([(1, 50, 85, 100), (8, 70, 90, 120)])})
        self.assertFalse(ok)
        text = ' | '.join(reasons)
        self.assertIn('ratio 1: VM1 IO reduction cams', text)
        self.assertIn('is not 2x', text)
        self.assertIn('disk reads cams 13.0/s not below', text)

    def test_oom_fails_the_bar(self):
        cams = doc([(8, 20, 95, 100)])
        cams['runs'][0]['vms'][1]['oom'] = True
        ok, reasons = seed004.bar({
            'cams': cams, 'proportional': doc([(8, 70, 90, 120)])})
        self.assertFalse(ok)
        self.assertIn('swapped or OOM', reasons[-1])
