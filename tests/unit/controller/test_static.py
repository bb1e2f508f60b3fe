import testtools

from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle.controller import static

STORE = model.Capacity(max_iops=100.0, max_bytes_sec=1e12)
KB64 = 65536.0


def disk(name, iops, min_iops=0.0, size=KB64):
    return model.DiskInput(
        sample=model.DiskSample(
            instance_uuid=name, device='vda', storage_domain='store',
            interval_s=2.0, write_iops=iops, write_bytes_sec=iops * size,
            latency_s=0.01, instance_name=name),
        guarantee=model.Guarantee(min_iops=min_iops))


def caps(disks, capacity=STORE):
    view = model.DomainView(storage_domain='store', capacity=capacity,
                            disks=tuple(disks), now_s=10.0)
    outcome = static.StaticPolicy().decide(view, None)
    return {d.instance_uuid: d for d in outcome.decisions}


class TestStaticShares(testtools.TestCase):

    def test_fair_share_without_floors(self):
        self.assertEqual([0.25] * 4, static.static_shares([0.0] * 4))

    def test_capacity_minus_the_others_floors_when_smaller(self):
        # Floors 0.5 and 0.3 leave a floorless third disk 0.2 < 1/3.
        shares = static.static_shares([0.5, 0.3, 0.0])
        self.assertAlmostEqual(0.5, shares[0])   # own floor > 1/3
        self.assertAlmostEqual(1 / 3, shares[1])
        self.assertAlmostEqual(0.2, shares[2])

    def test_never_below_own_floor_even_overbooked(self):
        self.assertEqual([0.7, 0.6], static.static_shares([0.7, 0.6]))


class TestStaticPolicy(testtools.TestCase):

    def test_every_disk_capped_whatever_it_does(self):
        decided = caps([disk('a', 90.0), disk('b', 0.0), disk('c', 5.0)])
        self.assertEqual({'a', 'b', 'c'}, set(decided))
        for d in decided.values():
            self.assertEqual(model.CAP, d.action)
            self.assertAlmostEqual(100 / 3, d.cap.iops, places=3)
            self.assertEqual(30.0, d.lease_s)

    def test_floor_in_bytes_at_own_request_size(self):
        # 4 KB requests: 400 KB/s is 100 IOPS, the whole store.
        d = model.DiskInput(
            sample=model.DiskSample(
                instance_uuid='a', device='vda', storage_domain='store',
                interval_s=2.0, read_iops=10.0, read_bytes_sec=40960.0),
            guarantee=model.Guarantee(min_bytes_sec=400 * 1024.0))
        decided = caps([d, disk('b', 10.0)])
        self.assertAlmostEqual(100.0, decided['a'].cap.iops, places=1)
        # b keeps the minimum cap, never 0 (unlimited).
        self.assertEqual(model.MinimumCap().iops, decided['b'].cap.iops)
        self.assertGreater(decided['b'].cap.bytes_sec, 0)

    def test_told_capacity_scales_the_caps(self):
        double = model.Capacity(max_iops=200.0, max_bytes_sec=1e12)
        decided = caps([disk('a', 50.0), disk('b', 50.0)], double)
        self.assertAlmostEqual(100.0, decided['a'].cap.iops, places=1)

    def test_cap_never_below_the_guarantee(self):
        decided = caps([disk('a', 10.0, min_iops=70.0),
                        disk('b', 10.0, min_iops=60.0)])
        self.assertAlmostEqual(70.0, decided['a'].cap.iops)
        self.assertAlmostEqual(60.0, decided['b'].cap.iops)

    def test_empty_domain(self):
        self.assertEqual({}, caps([]))

    def test_entry_point(self):
        self.assertIn('static', policy_mod.available_policies())
