"""``openstack iothrottle pool list|show|set|delete`` and ``pool volume
add|remove``: Cinder pools for the seek-model weigher and filter."""

import json

from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions

from iothrottle.osc.v1 import common

LIST_COLUMNS = ('pool', 'kind', 'profile_name', 'scheduler',
                'volume_count', 'promised_iops', 'promised_bytes_sec',
                'updated_at')
SHOW_COLUMNS = LIST_COLUMNS + ('volumes',)
VOLUME_COLUMNS = ('volume_id', 'size_bytes', 'min_iops', 'min_bytes_sec',
                  'offset_bytes', 'read_fraction', 'outstanding_requests')
VOLUME_NUMBERS = ('size_gib', 'min_iops', 'min_bytes_sec', 'offset_bytes',
                  'read_fraction', 'outstanding_requests')
VOLUME_HELPS = {
    'size_gib': "Size in Cinder's GB (GiB); required",
    'min_iops': "Guarantee in IOPS (overrides the tier's)",
    'min_bytes_sec': "Guarantee in bytes/s (overrides the tier's)",
    'offset_bytes': 'Where it starts on the device (default: after the '
                    'volumes recorded before it)',
    'read_fraction': 'Fraction of its requests that are reads, 0..1 '
                     '(default 1)',
    'outstanding_requests': 'Requests it keeps in flight (default 1)',
}


def _path(pool):
    return '/pools/%s' % common.quote_key(pool)


def _shown(pool):
    pool = dict(pool, volumes=format_columns.ListDictColumn(
        pool.get('volumes', ())))
    return common.one(pool, SHOW_COLUMNS)


class _PoolCommand(command.ShowOne):

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Cinder pool (host@backend#pool)')
        return parser


class ListPool(command.Lister):
    """List Cinder pools with a device profile."""

    def take_action(self, parsed_args):
        found = common.client(self).get('/pools')['pools']
        return LIST_COLUMNS, [common.one(pool, LIST_COLUMNS)[1]
                              for pool in found]


class ShowPool(_PoolCommand):
    """Show a pool and the volumes recorded on it."""

    def take_action(self, parsed_args):
        return _shown(common.client(self).get(
            _path(parsed_args.pool))['pool'])


class SetPool(_PoolCommand):
    """Set a pool's device profile (a JSON file as in
    etc/iothrottle/profiles) and I/O scheduler."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--profile', metavar='<file>', required=True,
                            help='Device profile, a JSON file')
        parser.add_argument('--scheduler', metavar='<scheduler>',
                            help='Host I/O scheduler in front of the device '
                                 '(mq-deadline, bfq, none, kyber)')
        return parser

    def take_action(self, parsed_args):
        try:
            with open(parsed_args.profile, encoding='utf-8') as stream:
                profile = json.load(stream)
        except (OSError, ValueError) as exc:
            raise exceptions.CommandError('--profile %s: %s' % (
                parsed_args.profile, getattr(exc, 'strerror', None)
                or exc)) from None
        body = {'profile': profile}
        if parsed_args.scheduler:
            body['scheduler'] = parsed_args.scheduler
        return _shown(common.client(self).put(_path(parsed_args.pool),
                                              body)['pool'])


class DeletePool(command.Command):
    """Forget a pool: its profile and recorded volumes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Cinder pool (host@backend#pool)')
        return parser

    def take_action(self, parsed_args):
        common.client(self).delete(_path(parsed_args.pool))


class AddPoolVolume(command.ShowOne):
    """Record a volume placed on a pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Cinder pool (host@backend#pool)')
        parser.add_argument('volume_id', metavar='<volume-id>',
                            help='Cinder volume ID')
        parser.add_argument('--tier', metavar='<tier>',
                            help='Guarantee of this tier')
        common.add_number_options(parser, VOLUME_NUMBERS, VOLUME_HELPS)
        return parser

    def take_action(self, parsed_args):
        body = {'volume_id': parsed_args.volume_id}
        body.update(common.given(parsed_args, VOLUME_NUMBERS))
        if parsed_args.tier:
            body['tier'] = parsed_args.tier
        volume = common.client(self).post(
            _path(parsed_args.pool) + '/volumes', body)['volume']
        return common.one(volume, VOLUME_COLUMNS)


class RemovePoolVolume(command.Command):
    """Forget a volume recorded on a pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pool', metavar='<pool>',
                            help='Cinder pool (host@backend#pool)')
        parser.add_argument('volume_id', metavar='<volume-id>',
                            help='Cinder volume ID')
        return parser

    def take_action(self, parsed_args):
        common.client(self).delete('%s/volumes/%s' % (
            _path(parsed_args.pool), common.quote(parsed_args.volume_id)))
