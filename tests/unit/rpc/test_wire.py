"""What crosses the bus is checked field by field (issue 9)."""

import math

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import testtools

from iothrottle.controller import model
from iothrottle.rpc import wire


def sample(uuid='vm1', **fields):
    base = dict(instance_uuid=uuid, device='vda', storage_domain='store',
                interval_s=2.0, write_iops=10.0, write_bytes_sec=655360.0,
                latency_s=0.01, instance_name=uuid, flavor='m1.gold')
    base.update(fields)
    return base


def report(*samples, caps=None, **fields):
    data = {'host': 'cmp-1', 'interval_s': 2.0, 'agent_id': 'a',
            'seq': 1, 'sent_at': 1e9, 'samples': list(samples),
            'caps': caps or {}}
    data.update(fields)
    return data


def decision(**fields):
    data = {'instance_uuid': 'vm1', 'device': 'vda', 'action': 'cap',
            'reason': 'r', 'cap': {'iops': 20.0, 'bytes_sec': 0.0},
            'lease_s': 30.0, 'guarantee': {'min_iops': 10.0}}
    data.update(fields)
    return data


class TestReport(testtools.TestCase):

    def test_a_malformed_sample_costs_only_itself(self):
        decoded = wire.decode_report(report(
            sample('vm1'), sample('vm2', storage_domain=['a', 'list']),
            sample('vm3', read_iops=float('inf'))))
        self.assertEqual(['vm1/vda'], [s.disk_id for s in decoded.samples])
        self.assertEqual(2, len(decoded.rejected))
        self.assertIn('storage_domain must be a string', decoded.rejected[0])
        self.assertIn('read_iops', decoded.rejected[1])

    def test_absurd_rates_are_refused_not_learned(self):
        # Issue 9 item 9: read_iops=1e12 became the domain's capacity.
        decoded = wire.decode_report(report(sample(read_iops=1e12)))
        self.assertEqual((), decoded.samples)
        self.assertIn('read_iops must be a finite number in [0, 1e+07]',
                      decoded.rejected[0])

    def test_a_cap_must_name_a_disk_of_its_own_report(self):
        decoded = wire.decode_report(report(sample(), caps={
            'vm1/vda': {'iops': 5.0, 'bytes_sec': 0.0},
            'other/vda': {'iops': 5.0, 'bytes_sec': 0.0}}))
        self.assertEqual({'vm1/vda'}, set(decoded.caps))
        self.assertIn('other/vda', decoded.rejected[0])

    def test_envelope_faults_refuse_the_report(self):
        for bad, field in ((dict(host=''), 'host'),
                           (dict(host=7), 'host'),
                           (dict(interval_s=float('nan')), 'interval_s'),
                           (dict(seq=-1), 'seq'),
                           (dict(samples='x'), 'samples')):
            e = self.assertRaises(ValueError, wire.decode_report,
                                  report(sample(), **bad))
            self.assertIn(field, str(e))
            self.assertNotIn('\n', str(e))

    def test_round_trip(self):
        s = model.DiskSample(**sample())
        cap = model.Cap(iops=5.0, bytes_sec=1e6)
        decoded = wire.decode_report(wire.report(
            'cmp-1', 2.0, [s], {s.disk_id: cap}, agent_id='a', seq=3,
            sent_at=5.0))
        self.assertEqual((s,), decoded.samples)
        self.assertEqual({s.disk_id: cap}, decoded.caps)
        self.assertEqual(('a', 3, 5.0),
                         (decoded.agent_id, decoded.seq, decoded.sent_at))


class TestDecision(testtools.TestCase):

    def test_a_lease_that_never_expires_is_refused(self):
        # Issue 9 item 3: NaN <= now is False, so a NaN lease never ran
        # out.
        for lease_s in (float('nan'), float('inf'), 1e300, -1.0):
            e = self.assertRaises(ValueError, wire.decision_from_dict,
                                  decision(lease_s=lease_s))
            self.assertIn('lease_s', str(e))

    def test_guarantee_has_the_tiers_bounds(self):
        e = self.assertRaises(ValueError, wire.decision_from_dict,
                              decision(guarantee={'weight': 1e-9}))
        self.assertIn('weight', str(e))

    def test_long_reason_is_cut_to_one_log_line(self):
        d, _ = wire.decision_from_dict(decision(reason='x' * 100000))
        self.assertEqual(wire.MAX_REASON_CHARS, len(d.reason))


# -- any JSON-like input ------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20))
json_like = st.recursive(
    scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=12), inner, max_size=5)),
    max_leaves=20)
sample_like = st.fixed_dictionaries(
    {}, optional={k: st.one_of(scalars, json_like) for k in
                  wire.SAMPLE_FIELDS})
report_like = st.fixed_dictionaries(
    {}, optional={'host': scalars, 'interval_s': scalars,
                  'agent_id': scalars, 'seq': scalars, 'sent_at': scalars,
                  'samples': st.lists(st.one_of(sample_like, json_like),
                                      max_size=4),
                  'caps': st.dictionaries(
                      st.text(max_size=12),
                      st.one_of(json_like, st.fixed_dictionaries(
                          {}, optional={'iops': scalars,
                                        'bytes_sec': scalars})),
                      max_size=3)})


def _finite_numbers(obj):
    for value in vars(obj).values():
        if isinstance(value, float):
            yield value


class TestAnyInput(testtools.TestCase):

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(report_like, json_like))
    def test_report_decodes_bounded_or_fails_in_one_line(self, data):
        try:
            decoded = wire.decode_report(data)
        except (ValueError, TypeError) as exc:
            self.assertNotIn('\n', str(exc))
            return
        for s in decoded.samples:
            for value in _finite_numbers(s):
                self.assertTrue(math.isfinite(value))
                self.assertLessEqual(value, wire.MAX_BYTES_SEC)
        for cap in decoded.caps.values():
            self.assertLessEqual(cap.iops, wire.MAX_IOPS)
        for line in decoded.rejected:
            self.assertNotIn('\n', line)

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.fixed_dictionaries(
        {}, optional={'instance_uuid': scalars, 'device': scalars,
                      'action': st.sampled_from(['cap', 'release', 'x']),
                      'reason': scalars, 'lease_s': scalars,
                      'cap': st.one_of(json_like, st.fixed_dictionaries(
                          {}, optional={'iops': scalars,
                                        'bytes_sec': scalars})),
                      'guarantee': json_like}), json_like))
    def test_decision_decodes_bounded_or_fails_in_one_line(self, data):
        try:
            decided, guarantee = wire.decision_from_dict(data)
        except (ValueError, TypeError) as exc:
            self.assertNotIn('\n', str(exc))
            return
        self.assertTrue(0 <= decided.lease_s <= wire.MAX_LEASE_S)
        for value in _finite_numbers(guarantee):
            self.assertTrue(math.isfinite(value))


class TestDecidedThroughAndFloors(testtools.TestCase):

    def test_decided_through_round_trips_and_is_checked(self):
        data = wire.report('cmp-1', 2.0, [], {}, agent_id='a', seq=1,
                           sent_at=1e9, decided_through=1e9 - 0.5)
        self.assertEqual(1e9 - 0.5,
                         wire.decode_report(data).decided_through)
        # An older agent sends none: nothing taken in.
        del data['decided_through']
        self.assertEqual(0.0, wire.decode_report(data).decided_through)
        for bad in (-1.0, float('nan'), 'soon', 1e12):
            exc = self.assertRaises(ValueError, wire.decode_report,
                                    report(decided_through=bad))
            self.assertIn('decided_through', str(exc))

    def test_unreadable_round_trips_and_is_checked(self):
        data = wire.report('cmp-1', 2.0, [], {}, unreadable=True)
        self.assertTrue(wire.decode_report(data).unreadable)
        # An older agent sends none: its host was read.
        del data['unreadable']
        self.assertFalse(wire.decode_report(data).unreadable)
        for bad in (1, 'yes', None, float('nan')):
            exc = self.assertRaises(ValueError, wire.decode_report,
                                    report(unreadable=bad))
            self.assertIn('unreadable must be true or false', str(exc))
        # A host that could not read its disks has no sample of them.
        exc = self.assertRaises(ValueError, wire.decode_report,
                                report(sample(), unreadable=True))
        self.assertIn('an unreadable host reports no samples', str(exc))

    def test_floors_round_trip(self):
        floors = wire.memory_floors({'vm2': 0, 'vm1': 2048})
        self.assertEqual({'vm1': 2048.0, 'vm2': 0.0}, floors)
        self.assertEqual(({'vm1': 2048.0, 'vm2': 0.0}, ()),
                         wire.decode_memory_floors(floors))

    def test_a_bad_floor_costs_only_itself(self):
        floors, rejected = wire.decode_memory_floors({
            'vm1': 512.0, 'vm2': float('nan'), 'vm3': -1.0, 'vm4': '512',
            'vm5': 1e16, 'vm6': True, '': 5.0, 'x' * 300: 5.0})
        self.assertEqual({'vm1': 512.0}, floors)
        self.assertEqual(7, len(rejected))
        self.assertIn('memory floor of vm2: min_memory_mb must be a finite '
                      'number', rejected[0])

    def test_a_malformed_envelope_is_refused(self):
        for bad in (None, ['vm1', 5.0], 'vm1=5'):
            exc = self.assertRaises(ValueError, wire.decode_memory_floors,
                                    bad)
            self.assertIn('memory floors must be a mapping', str(exc))
        exc = self.assertRaises(ValueError, wire.decode_memory_floors,
                                {'vm%d' % i: 1.0
                                 for i in range(wire.MAX_SAMPLES + 1)})
        self.assertIn('more than 10000 instances', str(exc))
