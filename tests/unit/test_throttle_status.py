"""Why is my VM throttled: the report from stored decisions."""

import datetime

import testtools

from iothrottle.db import api
from iothrottle import throttle_status

UUID = '6d0f7a4e-8b5c-4bd3-9a55-3f1c1a0b2c3d'
NOW = datetime.datetime(2026, 11, 22, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


def record(action, seconds_ago, device='vda', lease_s=30.0, iops=20.0,
           bytes_sec=0.0, reason='r'):
    decided = NOW - datetime.timedelta(seconds=seconds_ago)
    return api.DecisionRecord(
        decided_at=decided, storage_domain='nbd+unix:///s.sock',
        instance_uuid=UUID, device=device, action=action,
        cap_iops=iops if action == 'cap' else None,
        cap_bytes_sec=bytes_sec if action == 'cap' else None,
        lease_expires_at=(decided + datetime.timedelta(seconds=lease_s)
                          if action == 'cap' else None),
        reason=reason, policy='guarantee')


class TestStatusLines(testtools.TestCase):

    def test_no_decisions(self):
        self.assertEqual(
            ['instance %s: no decisions stored (never throttled, or the '
             'history was purged)' % UUID],
            throttle_status.status_lines(UUID, [], NOW))

    def test_live_cap_says_until_when_and_why(self):
        lines = throttle_status.status_lines(UUID, [
            record('cap', 5, bytes_sec=1.3e6,
                   reason='vm2 below its guarantee')], NOW)
        self.assertEqual(
            '  vda: capped at 20 IOPS, 1.3 MB/s until 2026-11-22 12:00:25 '
            'UTC (25 s left) by policy guarantee: vm2 below its guarantee',
            lines[1])

    def test_lapsed_lease_is_not_a_cap(self):
        lines = throttle_status.status_lines(UUID, [record('cap', 40)], NOW)
        self.assertEqual('  vda: not throttled: the last cap (20 IOPS) '
                         'ended at 2026-11-22 11:59:50 UTC', lines[1])

    def test_newest_decision_per_disk_wins(self):
        records = [record('release', 2, reason='calm'),
                   record('cap', 3, device='vdb'),
                   record('cap', 10)]
        lines = throttle_status.status_lines(UUID, records, NOW)
        self.assertEqual('  vda: not throttled: released at 2026-11-22 '
                         '11:59:58 UTC: calm', lines[1])
        self.assertTrue(lines[2].startswith('  vdb: capped at 20 IOPS'))
        self.assertEqual('history (newest first):', lines[3])
        self.assertEqual(3, len(lines) - 4)
        self.assertIn('vda release', lines[4])
