"""``openstack iothrottle decision list``."""

import uuid

from osc_lib.command import command

from iothrottle.osc.v1 import common
from iothrottle.osc.v1 import server as server_cmd

COLUMNS = ('decided_at', 'storage_domain', 'instance_uuid', 'device',
           'action', 'cap_iops', 'cap_bytes_sec', 'lease_expires_at',
           'policy', 'reason')


class ListDecision(command.Lister):
    """List the controller's recent decisions, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--storage-domain', metavar='<key>',
                            help='Only this storage domain\'s')
        parser.add_argument('--server', metavar='<server>',
                            help='Only this server\'s (ID, or a name '
                                 'resolved through Nova)')
        parser.add_argument('--since', metavar='<time>',
                            help='Only decided at or after this ISO 8601 '
                                 'time (2026-12-01T12:00:00Z)')
        parser.add_argument('--limit', metavar='<n>', type=int,
                            help='At most this many (default 100)')
        return parser

    def take_action(self, parsed_args):
        params = {}
        if parsed_args.storage_domain:
            params['storage_domain'] = parsed_args.storage_domain
        if parsed_args.server:
            try:
                params['instance_uuid'] = str(uuid.UUID(parsed_args.server))
            except ValueError:
                params['instance_uuid'] = server_cmd.find_server(
                    self, parsed_args.server).id
        if parsed_args.since:
            params['since'] = parsed_args.since
        if parsed_args.limit is not None:
            params['limit'] = parsed_args.limit
        found = common.client(self).get('/decisions', params=params)
        return COLUMNS, [common.one(decision, COLUMNS)[1]
                         for decision in found['decisions']]
