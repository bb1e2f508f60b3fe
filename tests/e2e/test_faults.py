"""The short fault matrix on the testbed (``iothrottle-bench faults
--short``): the conductor and the agent killed with ``kill -9``, and the
capped guest destroyed and started again, each mid-burst with a cap in
force, on the real RabbitMQ and MariaDB.  Every fault must meet issue
9's expectations: no cap outlives its lease, no process dies, and the
guarantees are defended again within 3 intervals of the fault clearing.
The whole matrix is ``iothrottle-bench faults`` (doc/security.rst)."""

import io
import sys

import testtools

from iothrottle.bench import fault_runner
from iothrottle.bench import faults


class TestFaults(testtools.TestCase):

    def test_short_fault_matrix_meets_the_expectations(self):
        out = io.StringIO()
        bench = fault_runner.FaultBench(faults.SHORT, out)
        rows = bench.run()
        text = faults.table(rows, bench.plan)
        sys.stdout.write(out.getvalue() + '\n' + text + '\n')
        self.assertEqual(list(faults.SHORT), [r['fault'] for r in rows])
        for row in rows:
            self.assertEqual([], faults.expectations(row, bench.plan),
                             '%s\n%s\nlogs in %s'
                             % (row['fault'], text, row['logs']))
            # Faults that cut the decision path are seen to: the cap of
            # the killed controller lapsed, it was not renewed.
            if row['cuts_control']:
                self.assertIsNotNone(row['stale_cap_s'])
        # The bench counted decisions in the services' logs.
        self.assertGreater(sum(r['decisions_cast'] for r in rows), 0)
