"""The baseline record's XML: round trip, and bad records refused."""

import hypothesis
from hypothesis import strategies as st
import testtools

from iothrottle.compute import baseline_record
from iothrottle.compute import iotune

LIMIT = st.integers(min_value=0, max_value=2 ** 53)
IOTUNE = st.builds(iotune.IoTune, LIMIT, LIMIT, LIMIT, LIMIT, LIMIT, LIMIT)
DEVICE = st.from_regex(r'\A[a-z][a-z0-9]{0,8}\Z')


class TestRecord(testtools.TestCase):

    @hypothesis.settings(max_examples=100, deadline=None)
    @hypothesis.given(st.dictionaries(DEVICE, IOTUNE, max_size=4))
    def test_round_trip(self, baselines):
        self.assertEqual(baselines, baseline_record.parse_record(
            baseline_record.format_record(baselines)))

    def test_namespaced_element_as_in_the_domain_xml(self):
        text = ('<i:baseline xmlns:i="%s"><i:disk dev="vdb" '
                'write_iops_sec="70"/></i:baseline>'
                % baseline_record.NAMESPACE_URI)
        self.assertEqual({'vdb': iotune.IoTune(write_iops_sec=70)},
                         baseline_record.parse_record(text))

    def test_bad_records_are_value_errors(self):
        for text in ('<baseline', '<other/>', None,
                     '<baseline><disk dev="../x"/></baseline>',
                     '<baseline><disk total_iops_sec="1"/></baseline>',
                     '<baseline><disk dev="vda" total_iops_sec="nan"/>'
                     '</baseline>'):
            exc = self.assertRaises(ValueError, baseline_record.parse_record,
                                    text)
            self.assertNotIn('\n', str(exc))

    @hypothesis.settings(max_examples=200, deadline=None)
    @hypothesis.given(st.text(max_size=200))
    def test_any_text_parses_or_is_a_value_error(self, text):
        try:
            baseline_record.parse_record(text)
        except ValueError:
            pass
