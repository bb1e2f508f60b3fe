"""Seed 001's direction on the block-layer testbed, shortened.

Runs ``iothrottle-bench seed001 --short --setting none --setting bfq``
(two guests, one synchronous 4 KiB random reader each, their disks at
the two ends of the 160 GiB seek disk under nbdfuse and a loop device)
and asserts what seed 001 found for the host scheduler: the CFQ-like
scheduler (BFQ, idling for the guest it just served) moves more data
than arrival order (none, the NOOP of 2009), because it switches
between VM images less.  BFQ idles so only for a guest in a cgroup of
its own and of the best-effort class (never for the idle class): the
test asserts both of each guest's QEMU, whose class the testbed sets
whatever libvirtd inherited (libvirtd started under ``ionice -c 3``
and the guests left in it: none and bfq both 402 KB/s).  Also that the
testbed left nothing behind.  The full table (5 guests, every
scheduler) is in README.rst.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

import testtools

from iothrottle.bench import seed001
from iothrottle.testbed import blocklayer

PREFIX = 'bl-e2e-s001-'


class TestSeed001(testtools.TestCase):

    def test_bfq_beats_none_on_consolidated_guests(self):
        if not blocklayer.scheduler_offered('bfq'):
            self.skipTest('this kernel has no BFQ scheduler')
        path = os.path.join(tempfile.mkdtemp(prefix='iothrottle-e2e-'),
                            'seed001.json')
        proc = subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.bench', 'seed001',
             '--short', '--setting', 'none', '--setting', 'bfq',
             '--prefix', PREFIX, '--json', path],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=600)
        sys.stdout.write(proc.stdout[-3000:])
        self.assertEqual(0, proc.returncode, proc.stdout[-3000:])
        with open(path) as f:
            doc = json.load(f)
        rows = {r['label']: r for r in doc['rows']}
        self.assertEqual({'none', 'bfq'}, set(rows))
        for r in rows.values():
            # The loop device ran the setting's scheduler, and BFQ could
            # tell the guests apart (each its own cgroup).
            self.assertEqual(r['scheduler'], r['scheduler_active'])
            self.assertEqual({}, seed001.shared_io_groups(r), r['label'])
            for vm, io_class in r['io_classes'].items():
                self.assertTrue(io_class.startswith('best-effort'),
                                (r['label'], vm, io_class))
        # Short run on this machine: none 169, bfq 524 KB/s (the disks
        # 8 GiB apart: 405 and 556).
        self.assertGreater(rows['bfq']['total_bytes_sec'],
                           1.2 * rows['none']['total_bytes_sec'])
        for r in rows.values():
            self.assertGreater(r['min_share'], 0.3, r)   # nobody starved
            self.assertIsNotNone(r['alpha_calibrate'])
        self.assertEqual(sorted(rows), sorted(doc['alpha_by_scheduler']))
        workdir = '/var/lib/iothrottle/testbed/' + PREFIX
        self.assertFalse(os.path.exists(workdir))
        for backing in glob.glob('/sys/block/loop*/loop/backing_file'):
            with open(backing) as f:
                self.assertFalse(f.read().startswith(workdir), backing)
