"""``openstack iothrottle server show SERVER``: why is my VM slow?

SERVER is resolved through Nova (a name to its id, with what Nova shows
the caller).  An id is used as is when the catalog has no Nova (a
cloud reaching iothrottle only): the API itself decides who may read
it, by the project that owns the instance.
"""

import uuid

from keystoneauth1 import exceptions as ks_exceptions
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


def _resolve(command_, name_or_id):
    """(id, name or None) of ``name_or_id``."""
    try:
        server_id = str(uuid.UUID(name_or_id))
    except ValueError:
        server_id = None
    try:
        server = find_server(command_, name_or_id)
    except ks_exceptions.EndpointNotFound:
        if server_id is None:
            raise
        return server_id, None
    return server.id, server.name


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
        server_id, name = _resolve(self, parsed_args.server)
        params = ({'limit': parsed_args.limit}
                  if parsed_args.limit is not None else None)
        state = common.client(self).get('/instances/%s' % server_id,
                                        params=params)['instance']
        state = dict(state, id=state['uuid'], name=name,
                     disks=format_columns.ListDictColumn(state['disks']),
                     history=format_columns.ListDictColumn(
                         state['history']))
        return common.one(state, COLUMNS)
