"""``openstack iothrottle host advise HOST``: seed 002 as advice.

The API asks the agent of compute host HOST (its ``[agent] host``, the
name the conductor knows it by) for its findings on the host's block
devices and its guests' disk configuration; one row per finding, most
severe first, each with the seed section it follows and the effect the
seed reports (``measured`` empty: not measured on iothrottle's
testbed).  What the agent had to skip (a domain that vanished while it
was read) is printed on stderr.
"""

from osc_lib.command import command

from iothrottle.osc.v1 import common

COLUMNS = ('severity', 'subject', 'rule', 'finding', 'recommendation',
           'seed', 'section', 'effect', 'measured')


class AdviseHost(command.Lister):
    """Advice on a compute host's block devices and its guests' disk
    configuration (seed 002's guidelines)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='<host>',
                            help='Compute host (its agent\'s [agent] host)')
        return parser

    def take_action(self, parsed_args):
        advice = common.client(self).get(
            '/hosts/%s/advice' % common.quote(parsed_args.host))['advice']
        for note in advice.get('notes', ()):
            self.app.stderr.write('note: %s\n' % note)
        return COLUMNS, [common.one(finding, COLUMNS)[1]
                         for finding in advice['findings']]
