"""Drives the seed-001 experiment on the block-layer testbed (the shell
around :mod:`iothrottle.bench.seed001`).

One testbed serves every setting in turn: the seek disk under nbdkit,
nbdfuse and a loop device, one partition per guest at the plan's
offsets.  Per setting the loop device's scheduler (and tunables) is
switched live, then ``iothrottle-calibrate`` probes the loop device with
the guests idle, then every guest runs its reader and libvirt's block
statistics are read over the window.
"""

import io

from iothrottle.bench import seed001
from iothrottle.cmd import calibrate
from iothrottle import testbed


class Seed001Run:

    def __init__(self, plan, out, prefix='itb-s001-'):
        self.plan = plan
        self.out = out
        self.prefix = prefix

    def guests(self):
        return [testbed.GuestSpec(name=s.name, flavor='bench.%s' % s.name,
                                  project='bench',
                                  memory_mb=self.plan.memory_mb,
                                  disk_mb=self.plan.disk_mb,
                                  disk_offset_mb=o)
                for s, o in zip(self.plan.streams(),
                                self.plan.offsets_mb())]

    def run(self, on_row=None):
        """Every setting of the plan; returns the rows (dicts)."""
        settings = [seed001.BY_LABEL[label] for label in self.plan.settings]
        rows = []
        with testbed.Testbed(self.guests(), prefix=self.prefix,
                             block_layer=settings[0].scheduler,
                             seekdisk=self.plan.seekdisk_params()) as tb:
            self.out.write('seek disk on %s, guests: %s\n' % (
                tb.blocklayer.device, ', '.join(
                    '%s at %d MiB' % (vm, o) for vm, o in zip(
                        tb.guests, self.plan.offsets_mb()))))
            for setting in settings:
                self.apply(tb, setting)
                calibration = self.calibrate(tb, setting)
                rates = self.measure_guests(tb)
                row = seed001.summarize(
                    self.plan, setting,
                    {vm: r.bytes_s for vm, r in rates.items()},
                    {vm: r.iops for vm, r in rates.items()}, calibration)
                row['calibration'] = calibration
                row['scheduler_active'] = tb.blocklayer.current_scheduler()
                row['io_groups'] = {vm: tb.io_group(vm) for vm in tb.guests}
                row['io_classes'] = {vm: tb.io_class(vm) for vm in tb.guests}
                self.out.write('  %s: %s\n' % (setting.label, '; '.join(
                    '%s %s in %s' % (vm, row['io_classes'][vm],
                                     row['io_groups'][vm])
                    for vm in tb.guests)))
                rows.append(row)
                if on_row is not None:
                    on_row(row)
        return rows

    def apply(self, tb, setting):
        # Through 'none': selecting the scheduler that is already active
        # is a no-op that would keep the previous setting's tunables.
        if setting.scheduler != 'none':
            tb.blocklayer.set_scheduler('none')
        tb.blocklayer.set_scheduler(setting.scheduler)
        for name, value in setting.tunables:
            tb.blocklayer.set_iosched(name, value)

    def calibrate(self, tb, setting):
        plan = self.plan
        argv = [tb.blocklayer.device, '--kind', 'hdd',
                '--scheduler', setting.scheduler,
                '--seconds-per-point', '%g' % plan.cal_seconds_per_point,
                '--distances', plan.cal_distances,
                '--streams', plan.cal_streams,
                '--file-size', '%dM' % plan.disk_mb]
        progress = io.StringIO()
        args = calibrate.parse_args(argv)
        _prof, doc, _table = calibrate.run(args, argv, progress)
        doc = dict(doc, command=' '.join([calibrate.PROG] + argv))
        self.out.write('  %s: calibrate alpha %.3f (%s)\n' % (
            setting.label, doc['alpha']['value'], doc['alpha']['method']))
        return doc

    def measure_guests(self, tb):
        load = testbed.Load(procs=self.plan.procs,
                            block_kb=self.plan.block_kb, rw='randread')
        for vm in tb.guests:
            tb.start_load(vm, load)
        try:
            tb.measure(self.plan.warmup_s)      # warm-up window, dropped
            return tb.measure(self.plan.window_s)
        finally:
            tb.stop_all_loads()
