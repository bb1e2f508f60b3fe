"""Seed 001's direction on the block-layer testbed, shortened.

Runs ``iothrottle-bench seed001 --short --setting none --setting bfq``
(two guests, one synchronous 4 KiB random reader each, their disks at
the two ends of an 8 GiB seek disk under nbdfuse and a loop device) and
asserts what seed 001 found for the host scheduler: the CFQ-like
scheduler (BFQ, idling for the guest it just served) moves more data
than arrival order (none, the NOOP of 2009), because it switches
between VM images less.  Also that the testbed left nothing behind.  The
full table (5 guests, every scheduler) is in README.rst.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

import testtools

PREFIX = 'bl-e2e-s001-'


class TestSeed001(testtools.TestCase):

    def test_bfq_beats_none_on_consolidated_guests(self):
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
        # Short run on this machine: none 433, bfq 644 KB/s.
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
