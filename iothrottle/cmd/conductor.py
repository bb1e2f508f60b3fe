"""``iothrottle-conductor``: decides caps for the storage domains of all
compute hosts (see :mod:`iothrottle.conductor`).

Listens on the RPC topic ``iothrottle-conductor`` of ``[DEFAULT]
transport_url``; guarantees come from ``[conductor] guarantees`` (Nova's
record of each instance, its host and its flavor's extra specs, with
database tiers; or, trusting every compute host, the database alone or
a tiers file); decisions and learned capacities go to ``[database]
connection``; with ``[cinder]`` configured, Cinder's notifications and
API keep the volumes recorded on each pool in step.  Bad input ends the
command with one line on stderr and a non-zero exit code.  Native
threads only: no eventlet.
"""

import gc
import signal
import socket
import sys
import threading

from iothrottle import cmd
from iothrottle.rpc import threads

PROG = 'iothrottle-conductor'
EXIT_ERROR = 1


class CommandError(Exception):
    """Ends the command with this one-line message and EXIT_ERROR."""


def build_conf(argv):
    from oslo_config import cfg
    from oslo_log import log as logging

    from iothrottle import conf as iothrottle_conf
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    logging.register_options(conf)
    conf(argv, project='iothrottle', prog=PROG)
    return conf


def build_guarantees(conf, engine):
    """``(guarantees, instances)`` for the core: with ``guarantees =
    nova`` an instance directory over Nova (and no flavor resolver);
    otherwise a flavor-name resolver and no directory (every reporting
    host trusted: warned at start)."""
    from oslo_log import log as logging

    from iothrottle.conductor import guarantees
    from iothrottle.conductor import instances
    from iothrottle import tiers as tiers_mod
    source = conf.conductor.guarantees
    refresh_s = conf.conductor.flavor_refresh_s
    if source == 'nova':
        try:
            client = instances.nova_client(conf)
        except ValueError as exc:       # names the option already
            raise CommandError(str(exc)) from None
        except Exception as exc:
            raise CommandError('[nova]: %s' % exc) from None
        return None, instances.Directory(
            client, engine, refresh_s=conf.nova.instance_refresh_s,
            retry_s=conf.nova.instance_retry_s)
    logging.getLogger(__name__).warning(
        '[conductor] guarantees = %s: every compute host is trusted for '
        'the disks it reports and guarantees follow the reported flavor '
        'name; for testbeds and standalone use only (see '
        'doc/security.rst)', source)
    if source == 'file':
        try:
            tiers = tiers_mod.load_tiers(conf.conductor.tiers_file)
        except tiers_mod.TiersError as exc:
            raise CommandError(str(exc)) from None
        fetch = guarantees.file_fetch(tiers)
    else:
        fetch = guarantees.db_fetch(engine)
    return guarantees.Resolver(fetch, refresh_s=refresh_s), None


def build(conf):
    """(Conductor, policy name) from ``conf``; raises CommandError."""
    from iothrottle.compute import capacity as capacity_mod
    from iothrottle.conductor import core
    from iothrottle.conductor import service
    from iothrottle.controller import policy as policy_mod
    from iothrottle.db import api as db_api
    from iothrottle.rpc import api as rpc_api
    try:
        policy = policy_mod.load_policy(conf)
        table = capacity_mod.CapacityTable.from_conf(conf)
        aliases = core.parse_aliases(conf.conductor.domain_alias)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        engine = db_api.engine_from_conf(conf)
    except Exception as exc:
        raise CommandError('[database] connection: %s' % exc) from None
    store = service.Store(engine)
    capacities = core.Capacities(table.default, table.by_domain,
                                 learn=conf.conductor.learn_capacity)
    for key, capacity in sorted(table.by_domain.items()):
        store.call('declaring the capacity of %s' % key,
                   db_api.declare_capacity, key, capacity.max_iops,
                   capacity.max_bytes_sec)
    service.load_capacities(store, capacities)
    interval_s = conf.controller.interval_s
    resolver, directory = build_guarantees(conf, engine)
    the_core = core.Core(
        policy, resolver, capacities,
        core.DomainMap(aliases), interval_s=interval_s,
        wait_s=conf.conductor.report_wait_fraction * interval_s,
        host_timeout_s=conf.conductor.host_timeout_intervals * interval_s,
        instances=directory)
    transport = rpc_api.get_transport(conf)
    membership = build_membership(conf)
    conductor = service.Conductor(
        the_core, rpc_api.ComputeAPI(
            transport, version_cap=conf.upgrade_levels.compute), store,
        conf.controller.policy,
        max_report_age_s=conf.conductor.max_message_age_s,
        capacity_refresh_s=conf.conductor.capacity_refresh_s,
        membership=membership)
    server = rpc_api.get_server(transport, rpc_api.CONDUCTOR_TOPIC,
                                socket.gethostname(),
                                [service.Endpoint(conductor)])
    return conductor, server


def build_membership(conf):
    """With ``[coordination] backend_url``: this conductor's membership
    of the group, joined (raises CommandError when the backend cannot be
    reached); else None (a single conductor decides every domain)."""
    from iothrottle.conductor import coordination
    if not conf.coordination.backend_url:
        return None
    membership = coordination.Membership.from_conf(
        conf, coordination.member_id())
    try:
        membership.start()
    except Exception as exc:
        raise CommandError('[coordination] backend_url: cannot join group '
                           '%s: %s' % (conf.coordination.group,
                                       str(exc).splitlines()[0]
                                       if str(exc) else exc)) from None
    return membership


def build_volumes(conf):
    """The conductor's follower of Cinder's volumes
    (:mod:`iothrottle.conductor.volumes`), idle unless ``[cinder]``
    enables it; raises CommandError."""
    from iothrottle.conductor import volumes
    from iothrottle.db import api as db_api
    try:
        return volumes.build(conf, db_api.engine_from_conf(conf))
    except ValueError as exc:       # names the option already
        raise CommandError(str(exc)) from None
    except Exception as exc:
        raise CommandError('[cinder]: %s' % exc) from None


def serve(conductor, server, stop_event):
    """Run until ``stop_event``; the RPC server stops on the way out."""
    server.start()
    loop = threading.Thread(target=conductor.run, name='iothrottle-decide',
                            daemon=True)
    loop.start()
    try:
        stop_event.wait()
    finally:
        conductor.stop()
        server.stop()
        server.wait()
        loop.join(10)


def main(argv=None):
    threads.setup()
    argv = sys.argv[1:] if argv is None else argv
    conf = cmd.configure(PROG, build_conf, argv)
    if conf is None:
        return EXIT_ERROR
    try:
        conductor, server = build(conf)
        cinder_volumes = build_volumes(conf)
    except CommandError as exc:
        sys.stderr.write('%s: %s\n' % (PROG, exc))
        return EXIT_ERROR
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_args: stop.set())
    # What is built by now lives as long as the process (libraries,
    # configuration, the RPC server: ~100k objects): frozen out of the
    # collector, a full collection no longer rescans it.  One that fell
    # inside a round at 10k instances made the round 60 ms longer.
    gc.collect()
    gc.freeze()
    cinder_volumes.start()
    try:
        serve(conductor, server, stop)
    finally:
        cinder_volumes.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
