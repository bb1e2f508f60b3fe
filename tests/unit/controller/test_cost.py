from hypothesis import given
from hypothesis import strategies as st
import testtools

from iothrottle.controller import cost
from iothrottle.controller import model

HDD = model.Capacity(max_iops=200.0, max_bytes_sec=150e6)


class TestCost(testtools.TestCase):

    def test_small_requests_saturate_on_iops(self):
        self.assertAlmostEqual(1.0, cost.load(HDD, 200, 0), places=6)

    def test_large_requests_saturate_on_bytes(self):
        # 512 KiB requests: the model allows ~118 per second.
        per_req = cost.request_cost_s(HDD, 524288)
        self.assertAlmostEqual(117.7, 1 / per_req, places=1)

    def test_worked_numbers_of_the_module_essay(self):
        self.assertAlmostEqual(1.005, cost.load(HDD, 200, 200 * 4096),
                               places=3)
        self.assertAlmostEqual(0.544, cost.load(HDD, 100, 100 * 65536),
                               places=3)

    def test_unknown_size_falls_back(self):
        self.assertEqual(cost.DEFAULT_REQUEST_BYTES,
                         cost.mean_request_bytes(0, 0))
        self.assertEqual(4096, cost.mean_request_bytes(10, 40960))

    def test_uncapped_disk_has_unbounded_load(self):
        self.assertEqual(float('inf'), cost.load_of_cap(HDD, 0, 0, 4096))

    @given(share=st.floats(0.01, 1.0), size=st.floats(512, 4 << 20),
           other=st.floats(512, 4 << 20))
    def test_cap_pair_bounds_load_whatever_size_the_guest_uses(
            self, share, size, other):
        iops, bytes_sec = cost.cap_for_load(HDD, share, size)
        self.assertAlmostEqual(share, cost.load_of_cap(HDD, iops, bytes_sec,
                                                       size), places=6)
        # The guest switches to another size: the most it can do is
        # min(iops cap, bytes cap / size) requests per second.
        n = min(iops, bytes_sec / other)
        self.assertLessEqual(cost.load(HDD, n, n * other), share * 1.000001)
