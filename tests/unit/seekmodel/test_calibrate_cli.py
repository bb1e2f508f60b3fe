"""The pure parts of iothrottle-calibrate and its probe."""

import argparse
import io

import testtools

from iothrottle.cmd import calibrate
from iothrottle.seekmodel import probe


class TestParsing(testtools.TestCase):

    def test_sizes(self):
        for text, value in (('4096', 4096), ('64K', 65536),
                            ('1.5G', 3 << 29), ('2GiB', 2 << 30),
                            ('16mb', 16 << 20), ('1T', 1 << 40)):
            self.assertEqual(value, calibrate.parse_size(text), text)
        for bad in ('0', '-1M', 'lots', ''):
            self.assertRaises(argparse.ArgumentTypeError,
                              calibrate.parse_size, bad)

    def test_counts(self):
        self.assertEqual([1, 2, 8], calibrate.parse_counts('8,2,1,2'))
        self.assertRaises(argparse.ArgumentTypeError,
                          calibrate.parse_counts, '0,2')
        self.assertRaises(argparse.ArgumentTypeError,
                          calibrate.parse_counts, 'two')

    def test_scheduler_file(self):
        self.assertEqual('mq-deadline', probe.parse_scheduler(
            'none [mq-deadline] kyber bfq\n'))
        self.assertEqual('none', probe.parse_scheduler('[none]\n'))
        self.assertIsNone(probe.parse_scheduler('none mq-deadline'))

    def _main(self, *argv):
        err = io.StringIO()
        rc = calibrate.main(list(argv), out=io.StringIO(), err=err)
        return rc, err.getvalue()

    def test_usage_errors_are_one_line_exit_2(self):
        for argv, message in (
                ((), 'the following arguments are required: path'),
                (('x', '--request-size', '1000'),
                 '--request-size must be a multiple of 4096'),
                (('x', '--scheduler', 'cfq'), "invalid choice: 'cfq'"),
                (('x', '--distances', '4M,0'),
                 "argument --distances: must be > 0, got '0'")):
            rc, err = self._main(*argv)
            self.assertEqual(2, rc)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn(message, err)
            self.assertTrue(err.startswith('iothrottle-calibrate: error: '))

    def test_validation_table(self):
        table = calibrate.validation_table([{
            'streams': 2, 'span_bytes': 4 << 30, 'l_ave_bytes': 1 << 30,
            'predicted_bytes_sec': 0.5e6, 'measured_bytes_sec': 0.4e6,
            'error_fraction': 0.25, 'alpha_counted': None,
            'l_served_bytes': 3 << 29,
            'fit_point': True}])
        self.assertEqual(
            '  N  span GiB  l_ave GiB   seen GiB    pred MB/s    meas MB/s   '
            'error   alpha\n'
            '  2         4      1.000      1.500       0.5000       0.4000  '
            '+25.0%     n/a  (fit)', table)
