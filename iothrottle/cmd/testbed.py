"""iothrottle-testbed: bring the testbed up and down by hand.

Examples (as root)::

    iothrottle-testbed build
    iothrottle-testbed up --vms 4 --delay-ms 4
    iothrottle-testbed --prefix bl- up --vms 2 --block-layer bfq
    iothrottle-testbed load vm1 -- -p 10 -b 64k -m randwrite
    iothrottle-testbed load vm2 -- -p 1 -b 64k
    iothrottle-testbed status --measure 5
    virsh blkdeviotune itb-vm1 vda --total-iops-sec 20 --live
    iothrottle-testbed stop vm1
    iothrottle-testbed down

``up`` leaves the testbed running (nbdkit detached) and records it under
/var/lib/iothrottle/testbed/<prefix>/; the other commands find it there.
``load`` takes the load generator's own options after ``--`` (see
``loadgen -h`` in iothrottle/testbed/loadgen.c).

``up --block-layer SCHED`` puts the store under a host block device
(nbdkit -> nbdfuse -> loop, direct I/O) whose I/O scheduler is SCHED, and
gives each guest a partition of it (see iothrottle/testbed/blocklayer.py);
``down --force`` also removes the loop device, FUSE mount and nbdfuse a
crashed run left.
"""

import argparse
import json
import logging
import sys

from iothrottle import testbed
from iothrottle.testbed import blocklayer
from iothrottle.testbed import core


def _parser():
    p = argparse.ArgumentParser(
        prog='iothrottle-testbed',
        description='Tiny libvirt/QEMU guests on one shared nbdkit store.')
    p.add_argument('--prefix', default='itb-',
                   help='testbed prefix: domain names are PREFIX+VM '
                        '(default: %(default)s)')
    p.add_argument('--state-root', default=testbed.DEFAULT_STATE_ROOT,
                   help=argparse.SUPPRESS)
    p.add_argument('-v', '--verbose', action='store_true')
    sub = p.add_subparsers(dest='command', required=True)

    b = sub.add_parser('build', help='build (or find) the guest images')
    b.add_argument('--cache-dir', default=testbed.DEFAULT_CACHE_DIR)

    u = sub.add_parser('up', help='start a testbed and leave it running')
    u.add_argument('--vms', type=int, default=4)
    u.add_argument('--delay-ms', type=int, default=4,
                   help='store delay per request (default: %(default)s)')
    u.add_argument('--memory-mb', type=int, default=192)
    u.add_argument('--disk-mb', type=int, default=256)
    u.add_argument('--project', default='demo')
    u.add_argument('--cache-dir', default=testbed.DEFAULT_CACHE_DIR)
    u.add_argument('--block-layer', choices=blocklayer.SCHEDULERS,
                   metavar='SCHED',
                   help='serve the store through a host block device '
                        'with this I/O scheduler (%s); default: plain NBD'
                        % ', '.join(blocklayer.SCHEDULERS))

    ld = sub.add_parser('load', help='start a load generator in a guest')
    ld.add_argument('vm')
    ld.add_argument('args', nargs=argparse.REMAINDER,
                    help='loadgen options (after --)')

    st = sub.add_parser('stop', help='stop the loads of guests')
    st.add_argument('vms', nargs='*', help='default: every guest')

    sh = sub.add_parser('sh', help='run a shell command in a guest')
    sh.add_argument('vm')
    sh.add_argument('cmd', nargs=argparse.REMAINDER)

    s = sub.add_parser('status', help='show the testbeds and their guests')
    s.add_argument('--measure', type=float, default=0.0, metavar='SECS',
                   help='also measure IOPS per guest over SECS seconds')
    s.add_argument('--json', action='store_true')

    d = sub.add_parser('down', help='tear the testbed down (also a stale '
                                    'one)')
    d.add_argument('--force', action='store_true',
                   help='even when a live process owns it')
    return p


def _cmd_build(args):
    imgs = testbed.build_images(args.cache_dir)
    for field in imgs._fields:
        print('%-15s %s' % (field, getattr(imgs, field)))
    return 0


def _cmd_up(args):
    spec = [testbed.GuestSpec(name='vm%d' % i, project=args.project,
                              memory_mb=args.memory_mb, disk_mb=args.disk_mb)
            for i in range(1, args.vms + 1)]
    tb = testbed.Testbed(spec, delay_ms=args.delay_ms, prefix=args.prefix,
                         cache_dir=args.cache_dir,
                         state_root=args.state_root, detach=True,
                         block_layer=args.block_layer)
    tb.start()
    print('testbed %s up: %s (store %s, %d ms per request)' % (
        args.prefix, tb.uri, tb.store.socket, tb.store.delay_ms))
    if tb.blocklayer is not None:
        print('block layer: %s, scheduler %s' % (
            tb.blocklayer.device, tb.blocklayer.current_scheduler()))
    for vm in tb.guests:
        print('  %-6s %-20s %s  boot %.1f s, domain start %.2f s%s' % (
            vm, tb.domain_name(vm), tb.instance_uuid(vm),
            tb.boot_seconds[vm], tb.start_seconds[vm],
            '  disk %s' % tb.disk_path(vm) if tb.disk_path(vm) else ''))
    tb.close()
    return 0


def _cmd_load(args):
    extra = args.args[1:] if args.args[:1] == ['--'] else args.args
    tb = testbed.Testbed.attach(args.prefix, args.state_root)
    try:
        reply = tb.console(args.vm).command('run', *extra)
        print('%s: loadgen %s started (pid %s)' % (
            args.vm, ' '.join(extra), ' '.join(reply.fields)))
    finally:
        tb.close()
    return 0


def _cmd_stop(args):
    tb = testbed.Testbed.attach(args.prefix, args.state_root)
    try:
        for vm in args.vms or tb.guests:
            tb.stop_load(vm)
            print('%s: loads stopped' % vm)
    finally:
        tb.close()
    return 0


def _cmd_sh(args):
    tb = testbed.Testbed.attach(args.prefix, args.state_root)
    try:
        rc, out = tb.run(args.vm, ' '.join(args.cmd))
    finally:
        tb.close()
    for line in out:
        print(line)
    return rc


def _cmd_status(args):
    beds = testbed.list_testbeds(args.state_root)
    report = {'host': testbed.host.libvirtd_status(), 'testbeds': {}}
    for prefix, state in beds.items():
        entry = {
            'detached': state.get('detached'),
            'owner_pid': state.get('owner_pid'),
            'owner_alive': core._owner_alive(state),
            'delay_ms': state.get('delay_ms'),
            'nbdkit_pid': state.get('nbdkit_pid'),
            'nbdkit_running': bool(testbed.store.find_nbdkit(
                state.get('nbd_socket') or '')),
            'block_layer': state.get('block_layer'),
            'guests': {},
        }
        try:
            tb = testbed.Testbed.attach(prefix, args.state_root)
        except Exception as exc:
            entry['error'] = str(exc)
        else:
            try:
                for vm in tb.guests:
                    try:
                        active = bool(tb.domain(vm).isActive())
                    except Exception:
                        active = None
                    entry['guests'][vm] = {'domain': tb.domain_name(vm),
                                           'uuid': tb.instance_uuid(vm),
                                           'active': active}
                if args.measure > 0:
                    for vm, r in tb.measure(args.measure).items():
                        entry['guests'][vm]['iops'] = round(r.iops, 1)
            finally:
                tb.close()
        report['testbeds'][prefix] = entry
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    h = report['host']
    print('libvirtd %s (sees /dev/kvm: %s), virtlogd %s' % (
        h['libvirtd_pids'] or 'not running', h['libvirtd_sees_kvm'],
        h['virtlogd_pids'] or 'not running'))
    if not beds:
        print('no testbed')
    for prefix, e in report['testbeds'].items():
        owner = 'detached' if e['detached'] else 'owner pid %s (%s)' % (
            e['owner_pid'], 'alive' if e['owner_alive'] else 'dead: stale')
        print('testbed %s: %s, store %s ms/request, nbdkit %s' % (
            prefix, owner, e['delay_ms'],
            'running' if e['nbdkit_running'] else 'NOT running'))
        if e['block_layer']:
            print('  block layer: /dev/%s, scheduler %s' % (
                e['block_layer'].get('loop'),
                e['block_layer'].get('scheduler')))
        if 'error' in e:
            print('  error: %s' % e['error'])
        for vm, g in e['guests'].items():
            print('  %-6s %-20s %s active=%s%s' % (
                vm, g['domain'], g['uuid'], g['active'],
                ' iops=%s' % g['iops'] if 'iops' in g else ''))
    return 0


def _cmd_down(args):
    removed = testbed.Testbed.cleanup_stale(args.prefix, args.state_root,
                                            force=args.force)
    print('testbed %s down (%d domain(s) removed)'
          % (args.prefix, len(removed)))
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    handler = globals()['_cmd_' + args.command]
    try:
        return handler(args)
    except (testbed.TestbedError, testbed.GuestError, KeyError) as exc:
        print('iothrottle-testbed: %s' % exc, file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
