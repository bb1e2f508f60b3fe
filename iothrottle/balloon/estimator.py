"""Cache utilization of a guest from its own kernel counters (pure).

What CAMS needs
---------------
Seed 004's signal is *read-hit pages / cache pages* per unit time.  A
stock Linux guest counts neither: there is no "page cache read hit"
counter in ``/proc/vmstat`` (idle page tracking and DAMON, which could
find touched pages, are not enabled in Debian's kernel).

What a stock guest does count
-----------------------------
Task I/O accounting (``CONFIG_TASK_IO_ACCOUNTING``, on in Debian, Ubuntu
and RHEL kernels) keeps, per process, in ``/proc/<pid>/io``:

* ``rchar``: bytes its ``read()``-family calls returned - hits and misses;
* ``read_bytes``: bytes it made the kernel fetch from storage (misses,
  with the readahead they triggered).

So over an interval, summed over the processes alive at both ends,
``rchar - read_bytes`` is the bytes served from the page cache: read
hits, in pages once divided by 4 KiB.  Writes do not enter either figure,
as CAMS wants.  Cache pages are ``Active(file) + Inactive(file)`` of
``/proc/meminfo`` (the page-cache LRU pages, block-device pages
included; ``Cached`` would leave those out and count shmem).

Where it is approximate (measured in doc/balloon.rst):

* hits are counted with multiplicity (a page read ten times counts ten
  times), the paper counts distinct pages: a hot page re-read often
  weighs more here.  Utilization is therefore defined as hit pages per
  second per cache page, clamped to 1 (a cache whose every page is read
  once a second is as useful as this scale can say);
* readahead that fetched pages nobody reads counts against hits
  (``read_bytes`` includes it), so hits are under-estimated by the
  readahead waste;
* ``rchar`` also counts reads from pipes, ttys and sockets (small for a
  cache-heavy workload; a guest could inflate it - it is tenant input);
* processes that start or exit within the interval are left out.

The reports are untrusted tenant input: :func:`validate` turns a report
into :class:`GuestCounters` or raises :class:`ReportError` with a
one-line reason; :func:`estimate` refuses impossible deltas.
"""

import dataclasses
import re
import types

PAGE_KIB = 4
PAGE_BYTES = 4096
# No guest reads from its cache faster than this (host memory bandwidth
# is ~10 GB/s); more is a lie or a counter wrap.
MAX_HIT_BYTES_S = 16 * 1024 ** 3
# Counters above 2^60 are garbage, not a long uptime.
MAX_COUNTER = 1 << 60
# At most this many processes are read from one report.
MAX_PROCESSES = 4096
# The command a guest agent runs for a report: every process's I/O
# counters and the memory counters, one line per value.
REPORT_ARGV = ('/bin/sh', '-c',
               "grep -H '' /proc/[0-9]*/io /proc/meminfo 2>/dev/null")

_IO_RE = re.compile(r'^/proc/(\d+)/io:(rchar|read_bytes): (\d+)$')
_MEM_RE = re.compile(r'^/proc/meminfo:([A-Za-z()_]+):\s+(\d+)( kB)?$')


class ReportError(ValueError):
    """A guest report that cannot be used (the reason in one line)."""


@dataclasses.dataclass(frozen=True)
class GuestCounters:
    """One validated report: memory figures in KiB, per-process bytes."""
    taken_at_s: float
    mem_total_kib: int
    cache_kib: int
    # pid -> (rchar, read_bytes)
    processes: types.MappingProxyType


@dataclasses.dataclass(frozen=True)
class Estimate:
    hit_pages: float        # read-hit pages over the interval
    cache_pages: float
    interval_s: float
    utilization: float      # hit pages per second per cache page, <= 1


def validate(text, taken_at_s):
    """:class:`GuestCounters` from the text of :data:`REPORT_ARGV`."""
    if isinstance(text, bytes):
        text = text.decode('ascii', errors='replace')
    processes, mem = {}, {}
    for line in text.splitlines():
        m = _IO_RE.match(line)
        if m:
            pid, key, value = int(m.group(1)), m.group(2), int(m.group(3))
            if value > MAX_COUNTER:
                raise ReportError('pid %d: %s %d out of range'
                                  % (pid, key, value))
            entry = processes.setdefault(pid, {})
            entry[key] = value
            continue
        m = _MEM_RE.match(line)
        if m:
            mem[m.group(1)] = int(m.group(2))
    if len(processes) > MAX_PROCESSES:
        raise ReportError('%d processes (more than %d)'
                          % (len(processes), MAX_PROCESSES))
    for key in ('MemTotal', 'Active(file)', 'Inactive(file)'):
        if key not in mem:
            raise ReportError('no %s in the report' % key)
        if mem[key] > MAX_COUNTER:
            raise ReportError('%s %d out of range' % (key, mem[key]))
    cache_kib = mem['Active(file)'] + mem['Inactive(file)']
    if cache_kib > mem['MemTotal']:
        raise ReportError('cache %d KiB exceeds MemTotal %d KiB'
                          % (cache_kib, mem['MemTotal']))
    complete = {pid: (v['rchar'], v['read_bytes'])
                for pid, v in processes.items()
                if 'rchar' in v and 'read_bytes' in v}
    return GuestCounters(taken_at_s, mem['MemTotal'], cache_kib,
                         types.MappingProxyType(complete))


def hit_bytes(before, after):
    """Bytes read from the page cache between two reports, over the
    processes present in both; a process whose counters went down (a pid
    reused) is left out."""
    total = 0
    for pid, (rchar, read_bytes) in after.processes.items():
        old = before.processes.get(pid)
        if old is None:
            continue
        d_rchar, d_read = rchar - old[0], read_bytes - old[1]
        if d_rchar < 0 or d_read < 0:
            continue
        total += max(0, d_rchar - d_read)
    return total


def estimate(before, after):
    """The :class:`Estimate` between two reports of one guest."""
    interval_s = after.taken_at_s - before.taken_at_s
    if interval_s <= 0:
        raise ReportError('reports %.3f s apart' % interval_s)
    hits_b = hit_bytes(before, after)
    if hits_b > MAX_HIT_BYTES_S * interval_s:
        raise ReportError('%.0f MiB/s of cache hits is not plausible'
                          % (hits_b / interval_s / 1024 ** 2))
    hit_pages = hits_b / PAGE_BYTES
    cache_pages = after.cache_kib / PAGE_KIB
    utilization = 0.0
    if cache_pages > 0:
        utilization = min(1.0, hit_pages / interval_s / cache_pages)
    return Estimate(hit_pages, cache_pages, interval_s, utilization)


class ReportGate:
    """Drops reports that come too often (a guest pushing, or a host
    asked to pull again too soon): one per ``min_interval_s``."""

    def __init__(self, min_interval_s):
        self.min_interval_s = min_interval_s
        self._last = {}

    def admit(self, key, now_s):
        last = self._last.get(key)
        if last is not None and now_s - last < self.min_interval_s:
            return False
        self._last[key] = now_s
        return True

    def forget(self, key):
        self._last.pop(key, None)
