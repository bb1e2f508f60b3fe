"""``iothrottle-manage``: the conductor's database, by hand.

::

    iothrottle-manage db sync        # create or upgrade the schema
    iothrottle-manage db version     # the schema's revision
    iothrottle-manage db purge --older-than 30d   # old decisions, cache
    iothrottle-manage tier create gold --min-iops 100 \\
        --min-bytes-sec 6553600 --weight 4
    iothrottle-manage tier list
    iothrottle-manage tier delete gold [--force]
    iothrottle-manage throttle why INSTANCE_UUID [--limit 20]
    iothrottle-manage pool set-profile cinder-1@lvm#a wd1600js.json \\
        --scheduler bfq
    iothrottle-manage pool add-volume cinder-1@lvm#a VOLUME_ID \\
        --size-gib 20 --tier gold
    iothrottle-manage pool list
    iothrottle-manage pool remove-volume VOLUME_ID
    iothrottle-manage pool delete cinder-1@lvm#a
    iothrottle-manage domain list    # capacity: declared or learned
    iothrottle-manage domain show KEY
    iothrottle-manage domain reset-capacity KEY   # forget a bad peak

The database is ``[database] connection`` of the configuration files
(``--config-file``, by default ``/etc/iothrottle/iothrottle.conf``).
Tier values are checked as flavor extra specs and the tiers file check
them (a number >= 0, a weight > 0, no floor above its ceiling).  Bad
input, a database that cannot be reached or has not been synced: one
line on stderr and exit code 1.
"""

import datetime
import os
import re
import sys
import uuid

from oslo_config import cfg
import sqlalchemy as sa

from iothrottle.cinder import placement
from iothrottle.conductor import instances
from iothrottle import conf as iothrottle_conf
from iothrottle.db import api
from iothrottle.db import migration
from iothrottle import extra_specs
from iothrottle.seekmodel import model as seek_model
from iothrottle.seekmodel import profile as profile_mod
from iothrottle import throttle_status
from iothrottle import tier_use
from iothrottle import tiers

PROG = 'iothrottle-manage'
EXIT_ERROR = 1


class CommandError(Exception):
    """Ends the command with this one-line message and EXIT_ERROR."""


def _add_parsers(subparsers):
    db = subparsers.add_parser('db', help='The database schema.')
    db_actions = db.add_subparsers(dest='action', metavar='ACTION')
    db_actions.required = True
    sync = db_actions.add_parser(
        'sync', help='Create or upgrade the schema to the newest revision.')
    sync.add_argument('--revision', default='head',
                      help='Upgrade to this revision instead of the newest.')
    db_actions.add_parser('version', help='Print the schema revision.')
    purge = db_actions.add_parser(
        'purge', help='Delete decisions and flavor cache entries older '
                      'than a duration.')
    purge.add_argument('--older-than', dest='older_than', metavar='DURATION',
                       required=True,
                       help='a whole number and a unit: s, m, h or d '
                            '(30d, 12h, 90m)')

    tier = subparsers.add_parser('tier', help='Guarantee tiers.')
    tier_actions = tier.add_subparsers(dest='action', metavar='ACTION')
    tier_actions.required = True
    create = tier_actions.add_parser(
        'create', help='Create a tier (flavors use it with '
                       'iothrottle:tier=NAME).')
    create.add_argument('tier_name', metavar='NAME')
    for key, unit in (('min_iops', 'IOPS'), ('min_bytes_sec', 'bytes/s'),
                      ('max_iops', 'IOPS'), ('max_bytes_sec', 'bytes/s')):
        create.add_argument('--' + key.replace('_', '-'), dest=key,
                            metavar=unit, default='0',
                            help='default 0 (none)')
    create.add_argument('--weight', dest='weight', metavar='WEIGHT',
                        default='1',
                        help='share of spare capacity, > 0 (default 1)')
    create.add_argument('--min-memory-mb', dest='min_memory_mb',
                        metavar='MiB', default='0',
                        help='balloon floor of its instances; default 0 '
                             '([balloon] floor_fraction of their memory)')
    tier_actions.add_parser('list', help='Print every tier.')
    delete = tier_actions.add_parser(
        'delete', help='Delete a tier; refused while a flavor in Nova '
                       '(asked with the [nova] credentials, if any) or a '
                       'recorded instance uses it.')
    delete.add_argument('tier_name', metavar='NAME')
    delete.add_argument('--force', action='store_true',
                        help='delete it even while used, without asking '
                             'Nova')

    throttle = subparsers.add_parser('throttle', help='Caps and why.')
    throttle_actions = throttle.add_subparsers(dest='action',
                                               metavar='ACTION')
    throttle_actions.required = True
    why = throttle_actions.add_parser(
        'why', help="Whether an instance's disks are capped now, and the "
                    "decisions (with their reasons) that capped them.")
    why.add_argument('instance_uuid', metavar='INSTANCE_UUID')
    why.add_argument('--limit', dest='limit', metavar='N', default='20',
                     help='decisions to show, newest first (default 20)')

    _add_pool_parsers(subparsers)
    _add_domain_parsers(subparsers)


def _add_domain_parsers(subparsers):
    domain = subparsers.add_parser(
        'domain', help='Storage domains: their capacity, declared (in '
                       "the conductor's capacity file) or learned.")
    actions = domain.add_subparsers(dest='action', metavar='ACTION')
    actions.required = True
    actions.add_parser('list', help='Print every storage domain.')
    show = actions.add_parser('show', help='Print one storage domain.')
    show.add_argument('domain_key', metavar='KEY')
    reset = actions.add_parser(
        'reset-capacity',
        help='Forget the learned peak of a storage domain (a running '
             'conductor re-reads it); a declared capacity stays.')
    reset.add_argument('domain_key', metavar='KEY')


# What ``pool add-volume`` records besides the guarantee: (option,
# help); the defaults are placement.Volume's.
_VOLUME_OPTIONS = (
    ('offset_bytes', 'where the volume starts on the device (default: '
                     'after the volumes recorded before it)'),
    ('read_fraction', 'fraction of its requests that are reads, 0..1 '
                      '(default 1)'),
    ('outstanding_requests', 'requests it keeps in flight, 0 = idle '
                             '(default 1)'),
)


def _add_pool_parsers(subparsers):
    pool = subparsers.add_parser(
        'pool', help='Cinder pools for the seek-model weigher and filter.')
    actions = pool.add_subparsers(dest='action', metavar='ACTION')
    actions.required = True
    set_profile = actions.add_parser(
        'set-profile', help='Set the device profile of a Cinder pool '
                            '(host@backend#pool) from a JSON file.')
    set_profile.add_argument('pool', metavar='POOL')
    set_profile.add_argument('profile_file', metavar='FILE')
    set_profile.add_argument(
        '--scheduler', default=None,
        help='host I/O scheduler in front of the device (%s); picks the '
             'calibrated alpha' % ', '.join(seek_model.SCHEDULERS))
    actions.add_parser('list', help='Print every pool with a profile.')
    delete = actions.add_parser(
        'delete', help='Forget a pool: its profile and recorded volumes.')
    delete.add_argument('pool', metavar='POOL')
    add = actions.add_parser(
        'add-volume', help='Record a volume placed on a pool.')
    add.add_argument('pool', metavar='POOL')
    add.add_argument('volume_id', metavar='VOLUME_ID')
    add.add_argument('--size-gib', dest='size_gib', metavar='GIB',
                     required=True, help="size in Cinder's GB (GiB)")
    add.add_argument('--tier', dest='tier', default=None,
                     help='guarantee of this tier (as iothrottle:tier)')
    for key, unit in (('min_iops', 'IOPS'), ('min_bytes_sec', 'bytes/s')):
        add.add_argument('--' + key.replace('_', '-'), dest=key,
                         metavar=unit, default=None,
                         help='overrides the tier\'s (default 0)')
    for key, text in _VOLUME_OPTIONS:
        add.add_argument('--' + key.replace('_', '-'), dest=key,
                         metavar='N', default=None, help=text)
    remove = actions.add_parser(
        'remove-volume', help='Forget a recorded volume.')
    remove.add_argument('volume_id', metavar='VOLUME_ID')


CATEGORY_OPT = cfg.SubCommandOpt('category', title='Commands',
                                 handler=_add_parsers)


def build_conf(argv):
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf.register_cli_opt(CATEGORY_OPT)
    conf(argv, project='iothrottle', prog=PROG)
    return conf


def _sqlite_dir(url):
    """The directory of a SQLite file URL; None for anything else."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != 'sqlite' or parsed.database in (
            None, '', ':memory:'):
        return None
    return os.path.dirname(os.path.abspath(parsed.database))


def db_sync(conf, engine):
    directory = _sqlite_dir(conf.database.connection)
    if directory and not os.path.isdir(directory):
        try:
            os.makedirs(directory, mode=0o750)
        except OSError as exc:
            raise CommandError('cannot create %s: %s'
                               % (directory, exc.strerror or exc)) from None
    migration.upgrade(engine, conf.category.revision)
    print('database at revision %s' % migration.current_revision(engine))


def db_version(conf, engine):
    current = migration.current_revision(engine)
    head = migration.head_revision()
    if current is None:
        print("none (not synced; newest is %s: run '%s db sync')"
              % (head, PROG))
    elif current == head:
        print('%s (newest)' % current)
    else:
        print("%s (newest is %s: run '%s db sync')" % (current, head, PROG))


# Seconds per unit of a DURATION (``db purge --older-than 30d``).
_DURATION_UNITS_S = {'s': 1, 'm': 60, 'h': 3600, 'd': 86400}
# A DURATION's text: a whole number (at most 9 digits) and a unit.
_DURATION_TEXT = re.compile(r'([0-9]{1,9})([smhd])')


def parse_duration(option, text):
    """Seconds of ``text`` (30d, 12h, 90m, 45s), > 0 and at most
    api.MAX_DURATION_S; CommandError naming ``option`` otherwise."""
    match = _DURATION_TEXT.fullmatch(text)
    if match is None:
        raise CommandError('%s: %r is not a duration (a whole number and '
                           's, m, h or d, e.g. 30d)' % (option, text[:40]))
    seconds = int(match.group(1)) * _DURATION_UNITS_S[match.group(2)]
    if not 0 < seconds <= api.MAX_DURATION_S:
        raise CommandError('%s: %r is not between 1s and %dd'
                           % (option, text, api.MAX_DURATION_S // 86400))
    return seconds


def db_purge(conf, engine):
    older_than_s = parse_duration('--older-than', conf.category.older_than)
    _require_synced(engine)
    purged = api.purge(engine, older_than_s)
    print('purged %d decision(s), %d flavor cache entr%s and %d instance '
          'record(s) older than %s'
          % (purged.decisions, purged.flavors,
             'y' if purged.flavors == 1 else 'ies', purged.instances,
             conf.category.older_than))


def _number(value):
    """A rate for a table: whole numbers in full, others short."""
    if value == int(value) and abs(value) < 1e15:
        return '%d' % value
    return '%g' % value


def _print_table(rows):
    """Rows of strings (the first is the header) as aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print('  '.join(cell.ljust(width)
                        for cell, width in zip(row, widths)).rstrip())


def _require_synced(engine):
    current = migration.current_revision(engine)
    head = migration.head_revision()
    if current != head:
        raise CommandError("database schema at revision %s, expected %s: "
                           "run '%s db sync'" % (current, head, PROG))


def _option_name(key):
    """How a message names the option of field ``key``: --min-iops."""
    return '--' + key.replace('_', '-')


def tier_create(conf, engine):
    args = conf.category
    try:
        extra_specs.parse_tier_name(args.tier_name)
    except ValueError as exc:
        raise CommandError('tier name: %s' % exc) from None
    try:
        guarantee = tiers.parse_guarantee(
            {key: getattr(args, key) for key in tiers.GUARANTEE_KEYS},
            tier=args.tier_name, name_of=_option_name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    _require_synced(engine)
    try:
        api.create_tier(engine, guarantee)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print('tier %s created' % args.tier_name)


def tier_list(conf, engine):
    _require_synced(engine)
    columns = ('name',) + tiers.GUARANTEE_KEYS
    rows = [columns] + [
        (name,) + tuple(_number(getattr(guarantee, key))
                        for key in tiers.GUARANTEE_KEYS)
        for name, guarantee in api.list_tiers(engine).items()]
    _print_table(rows)


def tier_delete(conf, engine):
    _require_synced(engine)
    try:
        warning = tier_use.delete_tier(engine, conf.category.tier_name,
                                       instances.nova_factory(conf),
                                       conf.category.force)
    except api.InUse as exc:
        raise CommandError('%s; --force deletes it anyway' % exc) from None
    except tier_use.NovaUnavailable as exc:
        raise CommandError('%s; --force deletes it without the check'
                           % exc) from None
    except api.NotFound as exc:
        raise CommandError(str(exc)) from None
    print('tier %s deleted' % conf.category.tier_name)
    if warning:
        sys.stderr.write(warning + '\n')


def throttle_why(conf, engine):
    args = conf.category
    try:
        instance_uuid = str(uuid.UUID(args.instance_uuid))
    except ValueError:
        raise CommandError('INSTANCE_UUID: %r is not a UUID'
                           % args.instance_uuid) from None
    try:
        limit = int(args.limit)
        if limit < 1:
            raise ValueError
    except ValueError:
        raise CommandError('--limit: %r is not a whole number >= 1'
                           % args.limit) from None
    _require_synced(engine)
    records = api.decisions_for_instance(engine, instance_uuid, limit)
    now = datetime.datetime.now(datetime.timezone.utc)
    for line in throttle_status.status_lines(instance_uuid, records, now):
        print(line)


def pool_set_profile(conf, engine):
    args = conf.category
    try:
        profile = profile_mod.load(args.profile_file)
    except OSError as exc:
        raise CommandError('%s: cannot read: %s' % (
            args.profile_file, exc.strerror or exc)) from None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    _require_synced(engine)
    try:
        api.set_pool_profile(engine, args.pool, profile, args.scheduler)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print('pool %s: profile %r (%s) set'
          % (args.pool, profile.name, profile.kind))


def pool_list(conf, engine):
    _require_synced(engine)
    columns = ('pool', 'kind', 'scheduler', 'volumes', 'min_iops',
               'min_bytes_sec', 'profile')
    rows = [columns]
    for record in api.pool_profiles(engine):
        iops, bytes_sec = placement.promised(record.volumes)
        rows.append((record.pool, record.profile.kind,
                     record.scheduler or '-', str(len(record.volumes)),
                     _number(iops), _number(bytes_sec),
                     record.profile.name))
    _print_table(rows)


def pool_delete(conf, engine):
    _require_synced(engine)
    try:
        dropped = api.delete_pool(engine, conf.category.pool)
    except api.NotFound as exc:
        raise CommandError(str(exc)) from None
    print('pool %s deleted (%d volume record(s))' % (conf.category.pool,
                                                     dropped))


def pool_add_volume(conf, engine):
    args = conf.category
    try:
        placement.check_pool_name(args.pool)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    values = {key: getattr(args, key) for key in api.VOLUME_KEYS}
    _require_synced(engine)
    try:
        volume = api.place_volume(engine, args.pool, args.volume_id, values,
                                  tier=args.tier, name_of=_option_name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print('volume %s recorded on pool %s (%s GiB, min_iops %s, '
          'min_bytes_sec %s)' % (volume.volume_id, args.pool,
                                 _number(volume.size_bytes / placement.GIB),
                                 _number(volume.min_iops),
                                 _number(volume.min_bytes_sec)))


def pool_remove_volume(conf, engine):
    _require_synced(engine)
    try:
        pool = api.forget_pool_volume(engine, conf.category.volume_id)
    except api.NotFound as exc:
        raise CommandError(str(exc)) from None
    print('volume %s removed from pool %s' % (conf.category.volume_id,
                                              pool))


def _updated(when):
    return when.strftime('%Y-%m-%d %H:%M:%S UTC') if when else '-'


def _maybe(value, form=str):
    """``value`` formatted (``form`` a %-format or a function); '-' for
    None (a domain whose load no round has stored yet)."""
    if value is None:
        return '-'
    return form % value if isinstance(form, str) else form(value)


# ``domain list`` and ``domain show``: (heading, value of a StorageDomain).
_DOMAIN_FIELDS = (
    ('key', lambda domain: domain.key),
    ('max_iops', lambda domain: _number(domain.max_iops)),
    ('max_bytes_sec', lambda domain: _number(domain.max_bytes_sec)),
    ('source', lambda domain: domain.capacity_source),
    ('peak_iops', lambda domain: _number(domain.peak_iops)),
    ('peak_bytes_sec', lambda domain: _number(domain.peak_bytes_sec)),
    ('updated', lambda domain: _updated(domain.updated_at)),
    ('load', lambda domain: _maybe(domain.load_fraction, '%.2f')),
    ('saturated', lambda domain: _maybe(
        domain.saturated, lambda saturated: 'yes' if saturated else 'no')),
    ('load_iops', lambda domain: _maybe(domain.load_iops, _number)),
    ('load_bytes_sec', lambda domain: _maybe(domain.load_bytes_sec,
                                             _number)),
    ('disks', lambda domain: _maybe(domain.load_disks)),
    ('caps', lambda domain: _maybe(domain.load_caps)),
    ('load_at', lambda domain: _updated(domain.load_at)),
)


def domain_list(conf, engine):
    _require_synced(engine)
    _print_table([tuple(name for name, _value in _DOMAIN_FIELDS)] + [
        tuple(value(domain) for _name, value in _DOMAIN_FIELDS)
        for domain in api.storage_domains(engine)])


def _print_domain(domain):
    _print_table([(name + ':', value(domain))
                  for name, value in _DOMAIN_FIELDS])


def domain_show(conf, engine):
    _require_synced(engine)
    try:
        _print_domain(api.get_storage_domain(engine,
                                             conf.category.domain_key))
    except api.NotFound as exc:
        raise CommandError(str(exc)) from None


def domain_reset_capacity(conf, engine):
    _require_synced(engine)
    try:
        domain = api.reset_peak(engine, conf.category.domain_key)
    except api.NotFound as exc:
        raise CommandError(str(exc)) from None
    print('storage domain %s: learned peak reset' % domain.key)
    _print_domain(domain)


COMMANDS = {
    ('db', 'sync'): db_sync,
    ('db', 'version'): db_version,
    ('db', 'purge'): db_purge,
    ('tier', 'create'): tier_create,
    ('tier', 'list'): tier_list,
    ('tier', 'delete'): tier_delete,
    ('throttle', 'why'): throttle_why,
    ('pool', 'set-profile'): pool_set_profile,
    ('pool', 'list'): pool_list,
    ('pool', 'delete'): pool_delete,
    ('pool', 'add-volume'): pool_add_volume,
    ('pool', 'remove-volume'): pool_remove_volume,
    ('domain', 'list'): domain_list,
    ('domain', 'show'): domain_show,
    ('domain', 'reset-capacity'): domain_reset_capacity,
}


def _fail(message):
    sys.stderr.write('%s: %s\n' % (PROG, message))
    return EXIT_ERROR


def _database_error(exc):
    """One line out of a driver's (often multi-line) error."""
    text = str(getattr(exc, 'orig', None) or exc).strip()
    return 'database error: %s' % (text.splitlines() or ['unknown'])[0]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = build_conf(argv)
    except cfg.Error as exc:
        return _fail(str(exc).splitlines()[0])
    command = COMMANDS[(conf.category.name, conf.category.action)]
    try:
        directory = _sqlite_dir(conf.database.connection)
    except sa.exc.ArgumentError as exc:
        return _fail('[database] connection: %s'
                     % str(exc).splitlines()[0])
    if directory and command is not db_sync and not os.path.isdir(
            directory):
        return _fail("no database: %s does not exist (run '%s db sync')"
                     % (directory, PROG))
    try:
        engine = api.engine_from_conf(conf)
    except (sa.exc.ArgumentError, ImportError) as exc:
        return _fail('[database] connection: %s'
                     % str(exc).splitlines()[0])
    try:
        command(conf, engine)
    except CommandError as exc:
        return _fail(str(exc))
    except sa.exc.SQLAlchemyError as exc:
        return _fail(_database_error(exc))
    finally:
        engine.dispose()
    return 0


if __name__ == '__main__':
    sys.exit(main())
