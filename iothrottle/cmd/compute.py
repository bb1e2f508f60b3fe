"""``iothrottle-compute``: the compute agent as a command.

Without ``--standalone`` the agent runs in conductor mode: it casts
each interval's samples to ``iothrottle-conductor`` over ``[DEFAULT]
transport_url`` and applies the caps the conductor casts back to its
topic ``iothrottle-compute.<[agent] host>``, as leases.
``--standalone`` runs collector, controller policy and actuator on this
host with no message bus and no database; guarantees come from the tiers
file (``[compute] tiers_file`` or ``--tiers-file``).  ``--list-disks``
prints every disk with its storage domain key and current rates (what an
operator needs to fill ``[storage] domain_capacity``).  ``--once`` runs a
single control interval and exits.  ``--advise`` prints what this host's
block devices and its guests' disk configuration say about their I/O
(:mod:`iothrottle.compute.advice`: seed 002's guidelines, each finding
with the seed section and the effect the seed reports), as a table or
``--format json``, and exits 0 whatever it finds.

Bad input (a malformed tiers file, an unreachable libvirt) ends the
command with one line on stderr and a non-zero exit code.
"""

import collections
import json
import os
import signal
import sys
import threading
import time

import libvirt
from oslo_config import cfg
from oslo_log import log as logging
from stevedore import driver

from iothrottle import cmd
from iothrottle.compute import actuator as actuator_mod
from iothrottle.compute import advice as advice_mod
from iothrottle.compute import agent as agent_mod
from iothrottle.compute import balloon_agent
from iothrottle.compute import capacity as capacity_mod
from iothrottle.compute import collector as collector_mod
from iothrottle.compute import connection as connection_mod
from iothrottle import conf as iothrottle_conf
from iothrottle.rpc import threads
from iothrottle import tiers as tiers_mod

PROG = 'iothrottle-compute'
LOG = logging.getLogger(__name__)
# Exit codes: bad input or environment; a mode that does not exist yet.
EXIT_ERROR = 1
EXIT_USAGE = 2
# Seconds between the two collections --list-disks turns into rates:
# long enough for a few requests, short enough for an interactive tool.
LIST_SAMPLE_S = 1.0
# Namespace of the controller policies in setup.cfg.
POLICY_NAMESPACE = 'iothrottle.policies'

CLI_OPTS = [
    cfg.BoolOpt('standalone', default=False,
                help='Run collector, controller and actuator on this host '
                     'with guarantees from the tiers file (no message bus, '
                     'no database).'),
    cfg.BoolOpt('once', default=False,
                help='Run one control interval, print what it did, lift '
                     'its caps and exit.'),
    cfg.BoolOpt('list-disks', default=False,
                help='Print every disk with its storage domain key and '
                     'current rates, then exit.'),
    cfg.StrOpt('tiers-file',
               help='Guarantees file; overrides [compute] tiers_file.'),
    cfg.BoolOpt('advise', default=False,
                help="Print advice on this host's block devices and its "
                     "guests' disk configuration (seed 002), then exit."),
    cfg.StrOpt('format', default='table', choices=('table', 'json'),
               help='Output of --advise.'),
]


class CommandError(Exception):
    """Ends the command with this one-line message and EXIT_ERROR."""


def build_conf(argv):
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf.register_cli_opts(CLI_OPTS)
    logging.register_options(conf)
    conf(argv, project='iothrottle', prog=PROG)
    return conf


def tiers_path(conf):
    """``--tiers-file`` if given, else ``[compute] tiers_file``."""
    # Not set_override: overrides of a group option live on the shared
    # OptGroup object and would leak into every other ConfigOpts.
    return conf.tiers_file or conf.compute.tiers_file


def connect(uri):
    """Open libvirt at ``uri`` or raise CommandError saying why not."""
    try:
        return connection_mod.Connection(uri)
    except libvirt.libvirtError as exc:
        raise CommandError('cannot connect to libvirt at %s: %s'
                           % (uri, exc.get_error_message() or exc)) from None


def load_policy(conf):
    name = conf.controller.policy
    try:
        manager = driver.DriverManager(POLICY_NAMESPACE, name,
                                       warn_on_missing_entrypoint=False)
    except Exception as exc:
        raise CommandError('[controller] policy: cannot load %r: %s'
                           % (name, exc)) from None
    try:
        return manager.driver.from_conf(conf)
    except ValueError as exc:
        raise CommandError('[controller] policy %r: %s'
                           % (name, exc)) from None


def load_tiers(conf):
    try:
        return tiers_mod.load_tiers(tiers_path(conf))
    except tiers_mod.TiersError as exc:
        raise CommandError(str(exc)) from None


def load_capacities(conf):
    try:
        return capacity_mod.CapacityTable.from_conf(conf)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def load_balloon(conf, conn, floors_mb):
    """The balloon agent if ``[balloon] enabled``, else None;
    ``floors_mb`` maps flavor names to their ``min_memory_mb``."""
    if not conf.balloon.enabled:
        return None
    try:
        return balloon_agent.BalloonAgent(conf, conn,
                                          min_memory_mb=floors_mb)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def conductor_mode_floors(conf):
    """Fallback balloon floors in conductor mode: the ``min_memory_mb``
    of the flavors in ``[compute] tiers_file`` if that file exists, else
    none (``[balloon] floor_fraction``).  The conductor casts each
    instance's own floor, which wins; these serve only the instances it
    has said nothing about (see
    :class:`iothrottle.compute.balloon_agent.BalloonAgent`).  A file
    that exists but is malformed is an error."""
    path = conf.compute.tiers_file
    if not path or not os.path.exists(path):
        return {}
    try:
        return tiers_mod.load_tiers(path).memory_floors()
    except tiers_mod.TiersError as exc:
        raise CommandError(str(exc)) from None


def list_disks(collector, out):
    """Print every disk with its storage domain key and rates."""
    collector.collect()
    time.sleep(LIST_SAMPLE_S)
    collection = collector.collect()
    rates = {sample.disk_id: sample for sample in collection.samples}
    out.write('%-24s %-6s %-10s %9s %9s %12s %12s  %s\n' % (
        'INSTANCE', 'DISK', 'FLAVOR', 'RD_IOPS', 'WR_IOPS', 'RD_B/S',
        'WR_B/S', 'STORAGE DOMAIN'))
    for instance in sorted(collection.instances.values(),
                           key=lambda i: (i.name or i.domain_name)):
        for disk in instance.disks:
            sample = rates.get('%s/%s' % (instance.uuid, disk.device))
            numbers = ((sample.read_iops, sample.write_iops,
                        sample.read_bytes_sec, sample.write_bytes_sec)
                       if sample is not None else (0.0,) * 4)
            out.write('%-24s %-6s %-10s %9.1f %9.1f %12.0f %12.0f  %s\n' % (
                (instance.name or instance.domain_name, disk.device,
                 instance.flavor or '-') + numbers + (disk.storage_domain,)))


def advisor_of(agent, host):
    """The advisor (:class:`iothrottle.compute.inventory.Advisor`) of
    ``agent``'s libvirt connection, or None when its collector has
    none."""
    from iothrottle.compute import inventory
    conn = getattr(agent.collector, 'conn', None)
    if conn is None:
        return None
    return inventory.Advisor(conn, host, device_of=getattr(
        agent.collector, 'device_of', collector_mod.block_device_of))


def print_advice(reply, fmt, out):
    """Print an advice reply (:func:`iothrottle.rpc.wire.advice_reply`)
    as ``fmt`` ('table' or 'json')."""
    if fmt == 'json':
        json.dump(reply, out, indent=2, sort_keys=True)
        out.write('\n')
        return
    findings = reply['findings']
    counts = collections.Counter(f['severity'] for f in findings)
    out.write('host %s: %d finding(s)%s on %d block device(s) and %d '
              'running domain(s)\n' % (
                  reply['host'], len(findings),
                  ' (%s)' % ', '.join('%d %s' % (counts[s], s)
                                      for s in advice_mod.SEVERITIES
                                      if counts[s]) if findings else '',
                  reply['devices'], reply['instances']))
    if findings:
        out.write('%-8s %-24s %-22s %s\n' % ('SEVERITY', 'SUBJECT', 'RULE',
                                             'FINDING'))
    for finding in findings:
        out.write('%-8s %-24s %-22s %s\n' % (
            finding['severity'], finding['subject'], finding['rule'],
            finding['finding']))
        out.write('%9s fix: %s\n' % ('', finding['recommendation']))
        source = ('seed %s section %s' % (finding['seed'], finding['section'])
                  if finding['seed'] else 'no seed')
        out.write('%9s %s: %s (%s)\n' % (
            '', source, finding['effect'],
            'measured on this testbed: %s' % finding['measured']
            if finding['measured'] else "the seed's figures, not measured "
            'on this testbed' if finding['seed'] else 'not measured'))
    for note in reply['notes']:
        out.write('note: %s\n' % note)


def print_report(report, out):
    out.write('step at %.1f s: %d samples, %d decisions, %d caps in '
              'force, %d errors, collection %.3f s\n' % (
                  report.now_s, len(report.samples), len(report.decisions),
                  len(report.caps), len(report.errors), report.collect_s))
    for decision in report.decisions:
        cap = decision.cap
        out.write('  %s %s%s: %s\n' % (
            decision.action, decision.disk_id,
            ' (%.0f IOPS, %.0f B/s)' % (cap.iops, cap.bytes_sec)
            if cap is not None else '', decision.reason))
    for message in report.errors:
        out.write('  error: %s\n' % message)


def run(conf, out=sys.stdout):
    """The command proper; raises CommandError on bad input."""
    if conf.list_disks:
        conn = connect(conf.compute.libvirt_uri)
        list_disks(collector_mod.Collector(conn), out)
        return 0
    if conf.advise:
        from iothrottle.compute import inventory
        conn = connect(conf.compute.libvirt_uri)
        reply = inventory.Advisor(conn, conf.agent.host)()
        if reply['error']:
            raise CommandError(reply['error'])
        print_advice(reply, conf.format, out)
        return 0
    if not conf.standalone:
        return run_conductor_mode(conf, out)
    tiers = load_tiers(conf)
    capacities = load_capacities(conf)
    policy = load_policy(conf)
    conn = connect(conf.compute.libvirt_uri)
    balloon = load_balloon(conf, conn, tiers.memory_floors())
    agent = agent_mod.Agent(conf, collector_mod.Collector(conn),
                            actuator_mod.Actuator(conn), policy, tiers,
                            capacities, balloon=balloon)
    restored = agent.reconcile()
    if restored:
        out.write('restored %d disk(s) left capped by a previous run: %s\n'
                  % (len(restored), ', '.join(restored)))
    if conf.once:
        time.sleep(conf.controller.interval_s)
        try:
            print_report(agent.step(), out)
        finally:
            agent.release_all()
        return 0
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_args: stop.set())
    agent.run(stop, on_step=lambda report: LOG.debug(
        '%d samples, %d decisions, %d caps', len(report.samples),
        len(report.decisions), len(report.caps)))
    return 0


def run_conductor_mode(conf, out, stop=None):
    """The agent in conductor mode until SIGINT/SIGTERM (or ``stop``)."""
    conn = connect(conf.compute.libvirt_uri)
    agent, restored = conductor_mode_agent(conf, conn)
    if restored:
        out.write('restored %d disk(s) left capped by a previous run: %s\n'
                  % (len(restored), ', '.join(restored)))
    if stop is None:
        stop = threading.Event()
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_args: stop.set())
    serve_conductor(conf, agent, conf.agent.host, stop)
    return 0


def conductor_mode_agent(conf, conn):
    """The agent of conductor mode on ``conn``, with the caps a previous
    run left undone: ``(agent, restored disk ids)``.

    Shared with the nova-compute monitor (:mod:`iothrottle.nova.monitor`).
    """
    from iothrottle.rpc import agent as remote_mod
    collector = remote_mod.OwnedCollector(collector_mod.Collector(conn),
                                          conf.agent.owned_domains)
    agent = agent_mod.Agent(conf, collector, actuator_mod.Actuator(conn),
                            policy=None, guarantees=None, capacities=None,
                            balloon=load_balloon(conf, conn,
                                                 conductor_mode_floors(conf)))
    return agent, agent.reconcile()


def serve_conductor(conf, agent, host, stop, on_step=None):
    """Report ``agent``'s intervals to the conductor as ``host`` and apply
    the decisions cast back, until ``stop`` is set; caps are lifted on
    the way out.  ``on_step(report)`` follows every interval."""
    from iothrottle.rpc import agent as remote_mod
    from iothrottle.rpc import api as rpc_api
    transport = rpc_api.get_transport(conf)
    remote = remote_mod.RemoteAgent(
        agent, rpc_api.ConductorAPI(transport,
                                    fanout=conf.agent.report_fanout), host,
        conf.controller.interval_s,
        max_decision_age_s=conf.agent.max_message_age_s,
        advisor=advisor_of(agent, host),
        check_s=conf.controller.idle_check_s)
    server = rpc_api.get_server(transport, rpc_api.compute_topic(host),
                                host, [remote_mod.Endpoint(remote)])
    server.start()
    LOG.info('agent of host %s reporting to the conductor', host)
    try:
        remote.run(stop, on_step=on_step)
    finally:
        server.stop()
        server.wait()


def main(argv=None):
    threads.setup()
    argv = sys.argv[1:] if argv is None else argv
    connection_mod.silence_default_errors()
    conf = cmd.configure(PROG, build_conf, argv)
    if conf is None:
        return EXIT_ERROR
    try:
        return run(conf)
    except CommandError as exc:
        sys.stderr.write('%s: %s\n' % (PROG, exc))
        return EXIT_ERROR


if __name__ == '__main__':
    sys.exit(main())
