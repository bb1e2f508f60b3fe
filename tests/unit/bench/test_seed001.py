import testtools

from iothrottle.bench import seed001
from iothrottle.seekmodel import model

GIB = 1 << 30
# f(l) of a disk like the seek disk's (bytes, bytes/s).
CURVE = [(256 << 20, 620e3), (1 * GIB, 540e3), (4 * GIB, 430e3),
         (16 * GIB, 380e3), (64 * GIB, 260e3), (159 * GIB, 160e3)]


def calibration(alpha, counted=0.2, two=400e3):
    return {'distance_points': [{'distance_bytes': d,
                                 'bandwidth_bytes_sec': b}
                                for d, b in CURVE],
            'alpha': {'value': alpha, 'method': 'l_ave inversion',
                      'by_service_order': counted},
            'validation': [{'streams': 1, 'measured_bytes_sec': 500e3},
                           {'streams': 2, 'measured_bytes_sec': two}]}


def row(label, total, alpha=0.5, plan=None):
    plan = plan or seed001.Plan()
    per = total / plan.guests
    rates = {'vm%d' % (k + 1): per for k in range(plan.guests)}
    return seed001.summarize(plan, seed001.BY_LABEL[label], rates,
                             {vm: b / 4096 for vm, b in rates.items()},
                             calibration(alpha))


class TestPlan(testtools.TestCase):

    def test_guests_spread_over_the_span_like_calibrate_files(self):
        plan = seed001.Plan()
        self.assertEqual([0, 40448, 80896, 121344, 161792],
                         plan.offsets_mb())
        last = plan.streams()[-1]
        self.assertEqual(160 * GIB, last.offset_bytes + last.size_bytes)
        self.assertEqual({'size': '160G', 'time_scale': '1'},
                         plan.seekdisk_params())

    def test_settings_map_to_seed_001(self):
        self.assertEqual({'none': 'NOOP', 'mq-deadline': 'Deadline',
                          'kyber': None, 'bfq': 'CFQ', 'bfq-long': 'CFQ8'},
                         {s.label: s.paper for s in seed001.SETTINGS})
        self.assertEqual(('none', 'mq-deadline', 'kyber', 'bfq'),
                         tuple(sorted({s.scheduler
                                       for s in seed001.SETTINGS},
                                      key=['none', 'mq-deadline', 'kyber',
                                           'bfq'].index)))

    def test_unknown_setting_is_named(self):
        e = self.assertRaises(ValueError, seed001.default_plan,
                              settings=['cfq'])
        self.assertIn("unknown setting 'cfq'", str(e))
        self.assertEqual(('bfq',), seed001.default_plan(
            settings=['bfq']).settings)


class TestScoring(testtools.TestCase):

    def test_guest_alpha_inverts_equation_1(self):
        plan = seed001.Plan()
        prof = seed001.profile_from_curve(CURVE)
        want = model.predict(prof, plan.streams(), alpha=0.7)
        alpha, bound = seed001.guests_alpha(plan, CURVE,
                                            want.bandwidth_bytes_sec)
        self.assertIsNone(bound)
        self.assertAlmostEqual(0.7, alpha, places=3)

    def test_guest_alpha_outside_f_is_clamped_and_flagged(self):
        plan = seed001.Plan()
        self.assertEqual((1.0, 'above'),
                         seed001.guests_alpha(plan, CURVE, 700e3))
        self.assertEqual((0.0, 'below'),
                         seed001.guests_alpha(plan, CURVE, 10e3))

    def test_summary_row(self):
        r = row('bfq', 500e3, alpha=0.9)
        self.assertEqual(500e3, r['total_bytes_sec'])
        self.assertAlmostEqual(500e3 / 4096, r['total_iops'])
        self.assertAlmostEqual(0.2, r['min_share'])
        self.assertEqual(0.9, r['alpha_calibrate'])
        self.assertEqual(0.2, r['alpha_calibrate_counted'])
        self.assertEqual(400e3, r['calibrate_2_streams_bytes_sec'])
        self.assertEqual('CFQ', r['paper'])

    def test_ranking_and_the_paper_order(self):
        rows = [row('none', 300e3), row('mq-deadline', 320e3),
                row('bfq', 450e3), row('bfq-long', 540e3)]
        self.assertEqual(['bfq-long', 'bfq', 'mq-deadline', 'none'],
                         seed001.ranking(rows))
        self.assertTrue(seed001.paper_order_kept(rows))
        self.assertAlmostEqual(0.2, seed001.long_slice_gain(rows))
        rows[1] = row('mq-deadline', 290e3)     # Deadline below NOOP
        self.assertFalse(seed001.paper_order_kept(rows))
        self.assertIsNone(seed001.paper_order_kept([row('bfq', 1e3)]))
        self.assertIsNone(seed001.long_slice_gain([row('bfq', 1e3)]))

    def test_alpha_by_scheduler_leaves_out_tuned_settings(self):
        rows = [row('none', 300e3, alpha=0.123456),
                row('bfq', 450e3, alpha=0.9),
                row('bfq-long', 540e3, alpha=0.95)]
        self.assertEqual({'none': 0.123, 'bfq': 0.9},
                         seed001.alpha_by_scheduler(rows))

    def test_table(self):
        plan = seed001.Plan()
        text = seed001.table([row('none', 300e3, plan=plan),
                              row('bfq', 450e3, plan=plan)], plan)
        self.assertIn('5 guests x 1 synchronous 4 KiB random reader', text)
        lines = text.splitlines()
        self.assertTrue(lines[2].startswith('none         NOOP'))
        self.assertIn('+50 %', lines[3])
        self.assertIn('ranking here: bfq > none', text)
        self.assertIn('order of the mapped settings kept: yes', text)

    def test_guests_sharing_an_io_cgroup_are_named(self):
        plan = seed001.Plan(guests=3)
        apart = row('bfq', 450e3, plan=plan)
        apart['io_groups'] = {'vm1': '/machine/a', 'vm2': '/machine/b',
                              'vm3': '/machine/c'}
        shared = dict(apart, io_groups={'vm1': '/', 'vm2': '/machine/b',
                                        'vm3': '/'})
        self.assertEqual({}, seed001.shared_io_groups(apart))
        self.assertEqual({}, seed001.shared_io_groups(row('none', 300e3)))
        self.assertEqual({'/': ['vm1', 'vm3']},
                         seed001.shared_io_groups(shared))
        self.assertNotIn('share the I/O cgroup',
                         seed001.table([apart], plan))
        self.assertIn('bfq: vm1, vm3 share the I/O cgroup / (BFQ cannot '
                      'tell them apart)', seed001.table([shared], plan))
