"""``openstack iothrottle server show SERVER``: why is my VM slow?"""

from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import utils

from iothrottle.osc.v1 import common

COLUMNS = ('id', 'name', 'project_id', 'tier', 'throttled', 'disks',
           'history')


def find_server(command_, name_or_id):
    """The novaclient Server of ``name_or_id`` (what Nova shows the
    caller: a project member finds its own project's servers only)."""
    return utils.find_resource(common.client(command_).nova().servers,
                               name_or_id)


class ShowServer(command.ShowOne):
    """Show a server's throttle state: per disk the live cap, its lease
    and why, then the recent decisions."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>',
                            help='Server (name or ID)')
        parser.add_argument('--limit', metavar='<n>', type=int, default=None,
                            help='Decisions of the history to show '
                                 '(default 20)')
        return parser

    def take_action(self, parsed_args):
        server = find_server(self, parsed_args.server)
        params = ({'limit': parsed_args.limit}
                  if parsed_args.limit is not None else None)
        state = common.client(self).get('/instances/%s' % server.id,
                                        params=params)['instance']
        state = dict(state, id=state['uuid'], name=server.name,
                     disks=format_columns.ListDictColumn(state['disks']),
                     history=format_columns.ListDictColumn(
                         state['history']))
        return common.one(state, COLUMNS)
