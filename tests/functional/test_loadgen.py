"""The guests' load generator (``iothrottle/testbed/loadgen.c``) run on
the host, its writes timed by strace: the paced processes it starts
together are spread over one slot of their rate, or not, as asked.

Run as root on Debian 12 (``tools/setup`` installs gcc and strace)::

    stestr --test-path=./tests/functional run test_loadgen

No sleep: each case waits for loadgen to exit (``-t``) and reads the
times strace wrote down.
"""

import subprocess

import fixtures
import testtools

from iothrottle.testbed import images

RATE_IOPS = 5          # a slot of 200 ms
SLOT_S = 1.0 / RATE_IOPS
# A process's first write lands within this of its deadline on an idle
# host; a tenth of the slot, so that half a slot apart and in phase
# cannot be confused.
TOLERANCE_S = 0.02


class TestPacedPhases(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir())
        self.loadgen = tmp.join('loadgen')
        images._compile_loadgen(self.loadgen)
        self.target = tmp.join('target')
        with open(self.target, 'wb') as f:
            f.truncate(16 << 20)
        self.trace = tmp.join('trace')

    def offsets_s(self, *args):
        """Each process's first write, in s after loadgen's exec, in
        order."""
        subprocess.run(
            ['strace', '-f', '-ttt', '-e', 'trace=execve,pwrite64', '-o',
             self.trace, self.loadgen, '-f', self.target, '-D', '-b', '4k',
             '-m', 'write', '-r', str(RATE_IOPS), '-t', '0.9'] + list(args),
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started, first = None, {}
        with open(self.trace) as f:
            for line in f:
                pid, at, call = line.split(None, 2)
                if call.startswith('execve(') and started is None:
                    started = float(at)
                elif call.startswith('pwrite64('):
                    first.setdefault(pid, float(at))
        return sorted(t - started for t in first.values())

    def assertOffsets(self, want_s, got_s):
        self.assertEqual(len(want_s), len(got_s), got_s)
        for want, got in zip(want_s, got_s):
            self.assertLess(abs(want - got), TOLERANCE_S, got_s)

    def test_processes_spread_over_their_slot_by_default(self):
        self.assertOffsets([0.0, SLOT_S / 2], self.offsets_s('-p', '2'))

    def test_in_phase_when_asked(self):
        self.assertOffsets([0.0, 0.0],
                           self.offsets_s('-p', '2', '-F', '0', '-G', '0'))

    def test_a_callers_phases_place_each_process(self):
        # Process 0 a third of a slot late, each next one a third more
        # (the scenario bench's second run of three paced processes).
        self.assertOffsets([SLOT_S / 3, 2 * SLOT_S / 3],
                           self.offsets_s('-p', '2', '-F', '0.3333',
                                          '-G', '0.3333'))

    def test_a_lone_process_runs_with_any_step(self):
        # What the scenario runner asks of a lone paced process.
        self.assertOffsets([0.0], self.offsets_s('-p', '1', '-F', '0',
                                                 '-G', '1'))

    def test_phases_outside_one_slot_are_refused(self):
        for args in (['-F', '1'], ['-p', '2', '-F', '0.5', '-G', '0.5']):
            out = subprocess.run(
                [self.loadgen, '-f', self.target, '-r', '5'] + args,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(2, out.returncode, args)
            self.assertIn(b'-F SLOTS', out.stderr)
