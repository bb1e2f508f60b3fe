"""``openstack iothrottle domain list|show|set``: storage domains."""

from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions

from iothrottle.osc.v1 import common

LIST_COLUMNS = ('key', 'max_iops', 'max_bytes_sec', 'capacity_source',
                'peak_iops', 'peak_bytes_sec', 'load', 'saturated',
                'caps_in_force', 'updated_at')
SHOW_COLUMNS = LIST_COLUMNS + ('load_iops', 'load_bytes_sec', 'load_disks',
                               'load_caps', 'load_at', 'policy_max_iops',
                               'policy_max_bytes_sec', 'disks')
DISK_KEYS = ('instance_uuid', 'device', 'state', 'cap_iops',
             'cap_bytes_sec', 'lease_expires_at')


def _path(key):
    return '/storage_domains/%s' % common.quote_key(key)


def _shown(domain):
    domain = dict(domain)
    domain['disks'] = format_columns.ListDictColumn(
        [{name: disk[name] for name in DISK_KEYS}
         for disk in domain.get('disks', ())])
    return common.one(domain, SHOW_COLUMNS)


class _DomainCommand(command.ShowOne):

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('key', metavar='<key>',
                            help='Storage domain key (e.g. '
                                 'rbd:ceph/volumes)')
        return parser


class ListDomain(command.Lister):
    """List storage domains: capacity, learned peak, last load and
    saturation, caps in force."""

    def take_action(self, parsed_args):
        found = common.client(self).get('/storage_domains')
        return LIST_COLUMNS, [common.one(domain, LIST_COLUMNS)[1]
                              for domain in found['storage_domains']]


class ShowDomain(_DomainCommand):
    """Show a storage domain and the disks the controller acted on."""

    def take_action(self, parsed_args):
        return _shown(common.client(self).get(
            _path(parsed_args.key))['storage_domain'])


class SetDomain(_DomainCommand):
    """Declare a storage domain's capacity, or forget its learned peak."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_number_options(parser, ('max_iops', 'max_bytes_sec'), {
            'max_iops': 'Declared capacity in IOPS (> 0; with '
                        '--max-bytes-sec)',
            'max_bytes_sec': 'Declared capacity in bytes/s (> 0; with '
                             '--max-iops)'})
        parser.add_argument('--reset-peak', action='store_true',
                            help='Forget the learned peak (a bad report, '
                                 'replaced hardware); a declared capacity '
                                 'stays')
        return parser

    def take_action(self, parsed_args):
        capacity = common.given(parsed_args, ('max_iops', 'max_bytes_sec'))
        if not capacity and not parsed_args.reset_peak:
            raise exceptions.CommandError(
                'nothing to change: give --max-iops and --max-bytes-sec, '
                'or --reset-peak')
        api = common.client(self)
        domain = None
        if capacity:
            domain = api.put(_path(parsed_args.key),
                             capacity)['storage_domain']
        if parsed_args.reset_peak:
            domain = api.delete(_path(parsed_args.key) + '/learned_peak')
            domain = domain['storage_domain']
        return _shown(domain)
