"""Tables and figures of the benchmarks (text and PNG)."""

import math


def _kb(value):
    if value is None or (isinstance(value, float) and math.isinf(value)):
        return '-'
    return '%.0f' % value


def ms(value):
    """A latency in ms for a table ('-' for None)."""
    return '-' if value is None else '%.1f' % value


def seed000_table(results):
    """A Table-2-like text table: per policy and VM, KB/s."""
    lines = ['%-10s %-4s %8s %9s %7s %7s %7s %10s' % (
        'policy', 'vm', 'demand', 'guarantee', 'max', 'min', 'mean',
        'satisfied')]
    for policy, run in results.items():
        for row in run['vms']:
            lines.append('%-10s %-4s %8s %9s %7.0f %7.0f %7.0f %9.0f%%' % (
                policy, row['name'], _kb(row['demand']),
                _kb(row['guarantee']), row['max'], row['min'], row['mean'],
                row['satisfied_fraction'] * 100))
        lines.append('%-10s total mean %.0f KB/s, mean latency %s ms '
                     '(%d intervals, %d scored)' % (
                         policy, run['total_mean'],
                         ms(run['latency_ms_mean']),
                         run['intervals'], run['scored_intervals']))
    return '\n'.join(lines)


def seed000_figure(path, series_by_policy, vm_names):
    """Stacked throughput over time, one panel per policy (like seed 000
    Fig. 3).  ``series_by_policy``: policy -> list of Interval."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    policies = list(series_by_policy)
    fig, axes = pyplot.subplots(len(policies), 1, sharex=True, sharey=True,
                                figsize=(8, 2.6 * len(policies)),
                                squeeze=False)
    for ax, policy in zip(axes[:, 0], policies):
        intervals = series_by_policy[policy]
        t = [i.end_s for i in intervals]
        stacks = [[i.kb_s.get(n, 0.0) for i in intervals] for n in vm_names]
        ax.stackplot(t, stacks, labels=vm_names, step='pre')
        ax.set_title('policy: %s' % policy)
        ax.set_ylabel('KB/s')
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc='upper right', fontsize='small', ncol=len(vm_names))
    axes[-1, 0].set_xlabel('seconds since the burst started')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot.close(fig)


def live_row(out, plan):
    """Print a header now and return ``on_interval(policy, interval,
    report)``, which prints one row per interval (KB/s and cap per VM)."""
    names = [vm.name for vm in plan.vms]
    out.write('%-10s %7s ' % ('policy', 't (s)') + ' '.join(
        '%13s' % ('%s KB/s cap' % n) for n in names)
        + '  latency  collect\n')

    def on_interval(policy, interval, _report):
        cells = []
        for n in names:
            cap = interval.caps.get(n)
            cells.append('%7.0f %5s' % (interval.kb_s.get(n, 0.0),
                                        '%.0f' % cap if cap else '-'))
        out.write('%-10s %7.1f ' % (policy, interval.end_s)
                  + ' '.join(cells) + '  %5.1f ms %5.0f ms\n' % (
                      interval.latency_ms, interval.collect_ms))
        out.flush()
    return on_interval
