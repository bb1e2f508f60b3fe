"""The direction of seed 004's result on the real testbed, shortened.

Runs ``iothrottle-bench seed004 --short`` (two QEMU guests ballooned to
240 of 320 MiB; VM1 re-reads a 100 MiB hot set, VM2 reads uniformly over
16 GiB as often, ratio 1) once with ``proportional`` and once with ``cams``
and asserts that CAMS gives VM1 the memory and VM1 saves more disk reads
for it, with no guest swapping or OOM-killed.  The full table (ratios 1
to 8) is in doc/balloon.rst.
"""

import json
import os
import subprocess
import sys
import tempfile

import testtools


class TestSeed004(testtools.TestCase):

    def run_policy(self, out_dir, policy):
        path = os.path.join(out_dir, '%s.json' % policy)
        proc = subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.bench', 'seed004',
             '--policy', policy, '--short', '--json', path],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=600)
        sys.stdout.write(proc.stdout[-3000:])
        self.assertEqual(0, proc.returncode, proc.stdout[-3000:])
        with open(path) as f:
            return json.load(f)['runs'][0]

    def test_cams_keeps_vm1_cache_where_proportional_does_not(self):
        out_dir = tempfile.mkdtemp(prefix='iothrottle-e2e-')
        prop = self.run_policy(out_dir, 'proportional')
        cams = self.run_policy(out_dir, 'cams')
        self.assertEqual(1, cams['ratio'])
        p1, c1 = prop['vms'][0], cams['vms'][0]
        self.assertEqual(['vm1', 'vm2'], [v['name'] for v in cams['vms']])
        # Full run, ratio 1: 320 vs 162 MiB, IO reduction 0.731 vs 0.044.
        self.assertGreater(c1['memory_target_mb'],
                           p1['memory_target_mb'] + 40)
        self.assertGreater(c1['io_reduction'], p1['io_reduction'] + 0.15,
                           (c1, p1))
        for run in (prop, cams):
            for vm in run['vms']:
                self.assertFalse(vm['swapped'] or vm['oom'], vm)
