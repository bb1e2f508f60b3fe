"""The seed-004 experiment: cache-aware ballooning vs proportional.

Seed 004 section 4: two guests on one host with too little memory for
both page caches.  VM1 reads files of 256 KB, 20 % of them taking 80 %
of its accesses, at a low rate; VM2 reads uniformly over a much larger
file set every 10 ms.  As VM2's frequency grows relative to VM1's
(ratios 1 to 8), proportional ballooning (the paper's SMS) hands VM2 the
memory and VM1's cache loses its hot set; CAMS keeps memory where the
cache is read.  Metric per VM: IO reduction = 1 - bytes the host read
from its disk / bytes the application read.

The testbed version (scaled to 320 MiB guests under TCG):

* flavor memory 320 MiB each, both start ballooned to 240 MiB: the host
  budget (480 MiB) is 75 % of the flavors' sum, and the policies can
  only move memory between the two (a guest's lower bound, what it uses
  + a 64 MiB margin, is ~150 MiB here: up to ~170 MiB can move);
* VM1: 2,000 files (500 MiB), the first 20 % (100 MiB) taking 80 % of
  the accesses, one access every ``20 x ratio`` ms.  The hot set is
  sized between the two outcomes: at its lower bound a guest has
  ~60 MiB of page cache, too little for it; with the memory of VM2's
  useless cache it has ~200 MiB, enough; at the start (240 MiB) it
  has ~130 MiB.  Its hot files are read twice before each run (a warm
  start, equal for every policy);
* VM2: 65,536 files (16 GiB, a sparse image on the host), uniform, one
  access every 20 ms: any cache it gets holds ~1 % of what it reads;
* per ratio: ``warm_s`` of the balloon policy at work, then
  ``measure_s`` measured.

This module holds the plan and the metrics (pure);
``iothrottle.bench.seed004_runner`` drives the testbed.
"""

import dataclasses

# The bar (issue 4): CAMS's VM1 at least this multiple of proportional's
# IO reduction at the largest ratio.
BAR_FACTOR_AT_MAX_RATIO = 2.0


@dataclasses.dataclass(frozen=True)
class VmPlan:
    name: str
    files: int
    hot_title_pct: int
    hot_access_pct: int
    disk_mb: int


@dataclasses.dataclass(frozen=True)
class Plan:
    vms: tuple
    ratios: tuple = (1, 2, 4, 8)
    file_kb: int = 256
    memory_mb: int = 320
    start_mb: int = 240
    vm2_interval_ms: float = 20.0
    warm_s: float = 30.0
    measure_s: float = 40.0
    interval_s: float = 2.0
    delay_ms: float = 1.0

    def interval_ms(self, vm_index, ratio):
        """Milliseconds between two accesses of VM ``vm_index``: VM2
        keeps its pace, VM1's is ``ratio`` times slower."""
        if vm_index == 0:
            return self.vm2_interval_ms * ratio
        return self.vm2_interval_ms

    def data_mb(self, vm):
        return vm.files * self.file_kb / 1024.0

    def hot_mb(self, vm):
        """MiB of ``vm``'s hot files (the first hot_title_pct %)."""
        return self.data_mb(vm) * vm.hot_title_pct / 100.0


def default_plan(short=False):
    vms = (VmPlan('vm1', files=2000, hot_title_pct=20, hot_access_pct=80,
                  disk_mb=500 + 64),
           VmPlan('vm2', files=65536, hot_title_pct=20, hot_access_pct=20,
                  disk_mb=16384 + 64))
    if short:
        return Plan(vms=vms, ratios=(1,), warm_s=24.0, measure_s=30.0)
    return Plan(vms=vms)


def io_reduction(app_bytes, disk_bytes):
    """1 - disk / app (negative when readahead read more than asked);
    None when the application read nothing."""
    if app_bytes <= 0:
        return None
    return 1.0 - float(disk_bytes) / float(app_bytes)


@dataclasses.dataclass(frozen=True)
class VmResult:
    name: str
    app_bytes: int
    disk_bytes: int
    memory_target_mb: float
    swapped: bool
    oom: bool
    true_hit_pages: int = 0
    app_pages: int = 0

    @property
    def io_reduction(self):
        return io_reduction(self.app_bytes, self.disk_bytes)

    def row(self):
        r = self.io_reduction
        return {'name': self.name,
                'io_reduction': None if r is None else round(r, 4),
                'memory_target_mb': round(self.memory_target_mb, 1),
                'swapped': self.swapped, 'oom': self.oom}


def run_row(ratio, vms, disk_read_reqs, seconds):
    """One ``runs`` entry of the JSON document (VM1 first)."""
    return {'ratio': ratio, 'vms': [vm.row() for vm in vms],
            'disk_read_iops': round(disk_read_reqs / seconds, 2)}


def bar(documents):
    """(met, reasons) of issue 4's bar from ``{policy: document}``;
    needs 'cams' and 'proportional'."""
    reasons = []
    cams = {r['ratio']: r for r in documents['cams']['runs']}
    prop = {r['ratio']: r for r in documents['proportional']['runs']}
    ratios = sorted(set(cams) & set(prop))
    if not ratios:
        return False, ['no ratio run by both policies']
    for ratio in ratios:
        c = cams[ratio]['vms'][0]['io_reduction']
        p = prop[ratio]['vms'][0]['io_reduction']
        if c is None or p is None or c < p:
            reasons.append('ratio %s: VM1 IO reduction cams %s < '
                           'proportional %s' % (ratio, c, p))
    top = ratios[-1]
    c = cams[top]['vms'][0]['io_reduction']
    p = prop[top]['vms'][0]['io_reduction']
    if c is not None and p is not None and not (
            c >= BAR_FACTOR_AT_MAX_RATIO * p and c > 0):
        reasons.append('ratio %s: VM1 IO reduction cams %.3f is not %.0fx '
                       'proportional %.3f' % (top, c,
                                              BAR_FACTOR_AT_MAX_RATIO, p))
    if cams[top]['disk_read_iops'] >= prop[top]['disk_read_iops']:
        reasons.append('ratio %s: disk reads cams %.1f/s not below '
                       'proportional %.1f/s' % (
                           top, cams[top]['disk_read_iops'],
                           prop[top]['disk_read_iops']))
    for name, doc in documents.items():
        for run in doc['runs']:
            for vm in run['vms']:
                if vm['swapped'] or vm['oom']:
                    reasons.append('%s ratio %s: %s swapped or OOM'
                                   % (name, run['ratio'], vm['name']))
    return not reasons, reasons


def table(documents):
    """A text table of VM1/VM2 IO reduction and memory per ratio."""
    lines = ['%-13s %5s %9s %9s %8s %8s %9s' % (
        'policy', 'ratio', 'VM1 red.', 'VM2 red.', 'VM1 MiB', 'VM2 MiB',
        'disk r/s')]
    for name, doc in documents.items():
        for run in doc['runs']:
            v1, v2 = run['vms'][0], run['vms'][1]
            lines.append('%-13s %5s %9s %9s %8.0f %8.0f %9.1f' % (
                name, run['ratio'], _fmt(v1['io_reduction']),
                _fmt(v2['io_reduction']), v1['memory_target_mb'],
                v2['memory_target_mb'], run['disk_read_iops']))
    return '\n'.join(lines)


def _fmt(value):
    return '-' if value is None else '%.3f' % value
