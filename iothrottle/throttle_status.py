"""Why is my VM throttled? The answer, from the stored decisions.

Pure: decision records (``iothrottle.db.api.DecisionRecord``, newest
first) and the time now in, lines of text out.  Per disk the newest
decision says the state:

* a cap whose lease has not expired: "capped at 20 IOPS, 1.3 MB/s until
  12:00:30 UTC (25 s left)" and the controller's reason;
* a cap whose lease ended: not throttled any more, from the end of its
  lease (the agent restored the disk by itself; the conductor stopped
  renewing) or from the round in which its agent reported the disk
  without a cap (an agent restarted, a guest restarted or migrated, a
  decision that arrived too late): the conductor then ends the stored
  lease at once (:func:`iothrottle.db.api.end_caps`);
* a release: not throttled since then.

The history follows, one line per decision, newest first.
"""

import datetime


def _utc(when):
    if when.tzinfo is None:
        return when.replace(tzinfo=datetime.timezone.utc)
    return when


def _clock(when):
    return _utc(when).strftime('%Y-%m-%d %H:%M:%S UTC')


def format_cap(cap_iops, cap_bytes_sec):
    """'20 IOPS, 1.3 MB/s' (a zero or missing limit is left out)."""
    parts = []
    if cap_iops:
        parts.append('%g IOPS' % round(cap_iops, 1))
    if cap_bytes_sec:
        parts.append('%.1f MB/s' % (cap_bytes_sec / 1e6))
    return ', '.join(parts) or 'no limit'


# A disk's state after its newest decision (see disk_status).
CAPPED = 'capped'
LAPSED = 'lapsed'
RELEASED = 'released'


def disk_status(record, now):
    """CAPPED (a cap whose lease runs at ``now``), LAPSED (a cap whose
    lease ended: it ran out, or its agent reported the cap lifted) or
    RELEASED."""
    expires = record.lease_expires_at
    if record.action == 'cap':
        if expires is not None and _utc(expires) > _utc(now):
            return CAPPED
        return LAPSED
    return RELEASED


def plain_reason(record):
    """Why ``record`` was decided, in words that name no other instance
    and give none of its numbers (a policy's own reason does both): what
    a project member may read about its own disk."""
    if record.action == 'cap':
        return ('the shared storage was saturated while another instance '
                'was below its guarantee; this disk was above its own '
                'guarantee, so its excess was capped (never below its '
                'guarantee)')
    return ('no guarantee on the shared storage was at risk any more, so '
            'the cap was lifted')


def disk_state(record, now):
    """One line: the state of ``record``'s disk after it, at ``now``."""
    expires = record.lease_expires_at
    if disk_status(record, now) == CAPPED:
        left_s = (_utc(expires) - _utc(now)).total_seconds()
        return '%s: capped at %s until %s (%.0f s left) by policy %s: %s' % (
            record.device, format_cap(record.cap_iops, record.cap_bytes_sec),
            _clock(expires), left_s, record.policy, record.reason)
    if record.action == 'cap':
        return ('%s: not throttled: the last cap (%s) ended at %s'
                % (record.device,
                   format_cap(record.cap_iops, record.cap_bytes_sec),
                   _clock(expires or record.decided_at)))
    return '%s: not throttled: released at %s: %s' % (
        record.device, _clock(record.decided_at), record.reason)


def history_line(record):
    cap = ''
    if record.action == 'cap':
        cap = ' %s' % format_cap(record.cap_iops, record.cap_bytes_sec)
    return '  %s  %s %s%s  [%s, %s]  %s' % (
        _clock(record.decided_at), record.device, record.action, cap,
        record.policy, record.storage_domain, record.reason)


def status_lines(instance_uuid, records, now):
    """The report on ``instance_uuid`` from ``records`` (newest first)."""
    if not records:
        return ['instance %s: no decisions stored (never throttled, or '
                'the history was purged)' % instance_uuid]
    lines = ['instance %s:' % instance_uuid]
    seen = set()
    for record in records:
        if record.device not in seen:
            seen.add(record.device)
            lines.append('  ' + disk_state(record, now))
    lines.append('history (newest first):')
    lines.extend(history_line(record) for record in records)
    return lines
