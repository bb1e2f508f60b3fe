"""The scenario bench on the real testbed, three short plans.

Runs ``iothrottle-bench scenarios --count 3 --seed 6 --short`` (one
testbed of QEMU guests on one nbdkit store; plans with 1-3 bursters, an
overbooked one, idle phases, a capacity told wrong by x0.8-x1.5) under
``none``, ``paper``, ``guarantee`` and ``static``.  It asserts what must
hold for any controller that works: the bench completes and scores every
plan, the uncontrolled run really breaks a floor somewhere, and
``guarantee`` keeps floors at least as well as no control.  The
issue-8 targets themselves are reported, not asserted (the JSON's
``summary`` and ``targets``).
"""

import json
import os
import subprocess
import sys
import tempfile

import testtools

POLICIES = ('none', 'paper', 'guarantee', 'static')


class TestScenarios(testtools.TestCase):

    def test_three_short_plans(self):
        out_dir = tempfile.mkdtemp(prefix='iothrottle-e2e-')
        path = os.path.join(out_dir, 'scenarios.json')
        png = os.path.join(out_dir, 'scenarios.png')
        proc = subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.bench', 'scenarios',
             '--count', '3', '--seed', '6', '--short', '--json', path,
             '--png', png],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=900)
        sys.stdout.write(proc.stdout[-6000:])
        self.assertEqual(0, proc.returncode, proc.stdout[-3000:])
        with open(path) as f:
            document = json.load(f)
        self.assertGreater(os.path.getsize(png), 0)
        plans = document['plans']
        self.assertEqual(3, len(plans))
        for plan in plans:
            self.assertEqual(set(POLICIES), set(plan['results']))
            for policy in POLICIES:
                self.assertGreater(
                    plan['results'][policy]['scored_intervals'], 0,
                    (plan['describe'], policy))

        def worst(policy):
            return [p['results'][policy]['worst_satisfied'] or 0.0
                    for p in plans]
        # Without control some floor breaks: else the draw proves nothing.
        self.assertLess(min(worst('none')), 0.95, worst('none'))
        # Control keeps floors at least as well as no control over the
        # three plans.  (Beating `static` on every plan is an issue-8
        # target the controller does not meet yet: reported in the JSON,
        # not asserted, so this test cannot pass or fail on noise there.)
        self.assertGreaterEqual(sum(worst('guarantee')), sum(worst('none')),
                                (worst('guarantee'), worst('none')))
        self.assertEqual(set(POLICIES), set(document['summary']))
