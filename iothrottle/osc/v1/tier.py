"""``openstack iothrottle tier create|list|show|set|delete``."""

from osc_lib.command import command

from iothrottle.osc.v1 import common
from iothrottle import tiers

COLUMNS = ('name',) + tiers.GUARANTEE_KEYS
HELPS = {
    'min_iops': 'Floor in IOPS the controller never caps below '
                '(default 0: none)',
    'min_bytes_sec': 'Floor in bytes/s (default 0: none)',
    'max_iops': 'Static ceiling in IOPS (default 0: none)',
    'max_bytes_sec': 'Static ceiling in bytes/s (default 0: none)',
    'weight': 'Share of spare capacity, 0.001 to 1000 (default 1)',
    'min_memory_mb': 'Balloon floor of its instances in MiB (default 0: '
                     '[balloon] floor_fraction of their memory)',
}


class CreateTier(command.ShowOne):
    """Create a guarantee tier (flavors use it with iothrottle:tier)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Tier name')
        common.add_number_options(parser, tiers.GUARANTEE_KEYS, HELPS)
        return parser

    def take_action(self, parsed_args):
        body = {'name': parsed_args.name}
        body.update(common.given(parsed_args, tiers.GUARANTEE_KEYS))
        return common.one(common.client(self).post('/tiers', body)['tier'],
                          COLUMNS)


class ListTier(command.Lister):
    """List guarantee tiers."""

    def take_action(self, parsed_args):
        found = common.client(self).get('/tiers')['tiers']
        return COLUMNS, [common.one(tier, COLUMNS)[1] for tier in found]


class ShowTier(command.ShowOne):
    """Show a guarantee tier."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Tier name')
        return parser

    def take_action(self, parsed_args):
        return common.one(common.client(self).get(
            '/tiers/%s' % common.quote(parsed_args.name))['tier'], COLUMNS)


class SetTier(command.ShowOne):
    """Change a tier's values (the others stay)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Tier name')
        common.add_number_options(parser, tiers.GUARANTEE_KEYS, HELPS)
        return parser

    def take_action(self, parsed_args):
        body = common.given(parsed_args, tiers.GUARANTEE_KEYS)
        common.require_any(body, ', '.join(
            '--' + key.replace('_', '-') for key in tiers.GUARANTEE_KEYS))
        return common.one(common.client(self).put(
            '/tiers/%s' % common.quote(parsed_args.name), body)['tier'],
            COLUMNS)


class DeleteTier(command.Command):
    """Delete a tier (refused while a flavor in Nova or an instance uses
    it, unless --force)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Tier name')
        parser.add_argument(
            '--force', action='store_true',
            help='Delete it even while flavors or instances use it (they '
                 'lose their guarantee), without asking Nova')
        return parser

    def take_action(self, parsed_args):
        common.client(self).delete(
            '/tiers/%s' % common.quote(parsed_args.name),
            params={'force': 'true'} if parsed_args.force else None)
