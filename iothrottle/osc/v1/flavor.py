"""``openstack iothrottle flavor show FLAVOR``: the guarantee a flavor's
extra specs resolve to."""

from osc_lib.command import command

from iothrottle.osc.v1 import common
from iothrottle import tiers

COLUMNS = ('id', 'name', 'extra_specs', 'error') + tuple(
    'guarantee.%s' % key for key in ('tier',) + tiers.GUARANTEE_KEYS)


class ShowFlavor(command.ShowOne):
    """Show the guarantee a Nova flavor's iothrottle: extra specs give."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='Flavor (name or ID)')
        return parser

    def take_action(self, parsed_args):
        flavor = common.client(self).get('/flavors/%s/guarantee'
                                         % common.quote(parsed_args.flavor))
        flavor = dict(flavor['flavor'])
        for key, value in (flavor.pop('guarantee') or {}).items():
            flavor['guarantee.%s' % key] = value
        return common.one(flavor, COLUMNS)
