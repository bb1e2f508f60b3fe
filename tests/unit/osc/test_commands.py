"""``openstack iothrottle ...`` commands against the API in-process.

The commands run through cliff's own output (``-f json|yaml|value|csv``,
``-c``), their client through a real keystoneauth session, and the
requests through wsgi-intercept into the real iothrottle-api pipeline
(noauth2: the token header names user and project) over a seeded
SQLite database.  Server names are resolved by a real python-novaclient
against a small fake Nova (GET /servers/{id}, /servers/detail?name=).
"""

import io
import json
import os
import re

import fixtures as fixtures_lib
from keystoneauth1 import session as ks_session
from novaclient import client as nova_client
from osc_lib import exceptions
import testtools
import webob
import webob.dec
from wsgi_intercept import interceptor
import yaml

from iothrottle.api import config
from iothrottle.api import deploy
from iothrottle.osc import client as client_mod
from iothrottle.osc.v1 import decision
from iothrottle.osc.v1 import domain
from iothrottle.osc.v1 import flavor
from iothrottle.osc.v1 import host as host_cmd
from iothrottle.osc.v1 import pool
from iothrottle.osc.v1 import server
from iothrottle.osc.v1 import tier
from tests.unit.api import fixtures as api_fixtures
from tests.unit.db import base as db_base

API_HOST = 'iothrottle.test'
NOVA_HOST = 'nova.test'
ADMIN = {'X-Auth-Token': 'admin:admin-proj',
         'X-Roles': 'admin,member,reader'}
ALICE = {'X-Auth-Token': 'alice:proj-a', 'X-Roles': 'member,reader'}
SERVERS = {api_fixtures.UUID_A: 'web-1', api_fixtures.UUID_B: 'db-1'}


@webob.dec.wsgify
def fake_nova(req):
    """Nova's GET /v2.1/servers/{id} and /v2.1/servers[/detail]?name=."""
    def body(uuid):
        return {'id': uuid, 'name': SERVERS[uuid]}
    parts = req.path_info.strip('/').split('/')
    if parts[:2] != ['v2.1', 'servers'] or req.method != 'GET':
        return webob.Response(status=404)
    if len(parts) == 3 and parts[2] != 'detail':
        if parts[2] not in SERVERS:
            return webob.Response(status=404, json_body={
                'itemNotFound': {'code': 404, 'message': 'not found'}})
        return webob.Response(json_body={'server': body(parts[2])})
    pattern = req.GET.get('name', '')
    return webob.Response(json_body={'servers': [
        body(uuid) for uuid, name in sorted(SERVERS.items())
        if re.search(pattern, name)]})


class App:
    """What cliff's commands use of the OSC application."""

    def __init__(self, iothrottle):
        self.client_manager = type('ClientManager', (), {})()
        self.client_manager.iothrottle = iothrottle
        self.stdout = io.StringIO()
        self.stderr = io.StringIO()
        self.options = None


class CommandTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        database = self.useFixture(db_base.SyncedDatabase())
        api_fixtures.seed(database.engine)
        conf = config.build_conf([], default_config_files=[])
        conf.set_override('auth_strategy', 'noauth2', 'api')
        app = deploy.deploy(conf, database.engine,
                            nova=api_fixtures.FakeNova,
                            compute_api=api_fixtures.FakeCompute)
        for host, wsgi_app in ((API_HOST, app), (NOVA_HOST, fake_nova)):
            intercept = interceptor.RequestsInterceptor(
                lambda wsgi_app=wsgi_app: wsgi_app, host=host, port=80)
            intercept.__enter__()
            self.addCleanup(intercept.__exit__, None, None, None)
        self.tmp = self.useFixture(fixtures_lib.TempDir()).path

    def client(self, headers):
        session = ks_session.Session()

        def nova():
            return nova_client.Client(
                '2.1', session=session,
                endpoint_override='http://%s/v2.1' % NOVA_HOST)
        return client_mod.Client(
            session, endpoint_override='http://%s' % API_HOST,
            additional_headers=dict(headers), nova_factory=nova)

    def run_command(self, command_class, *argv, headers=ADMIN):
        """Run the command as OSC does; its stdout."""
        app = App(self.client(headers))
        command = command_class(app, None)
        parsed = command.get_parser('openstack iothrottle').parse_args(
            list(argv))
        command.run(parsed)
        self.stderr = app.stderr.getvalue()
        return app.stdout.getvalue()

    def json_of(self, command_class, *argv, headers=ADMIN):
        return json.loads(self.run_command(command_class, *argv, '-f',
                                           'json', headers=headers))


class TestTierCommands(CommandTestCase):

    def test_create_show_set_list_delete(self):
        created = self.json_of(tier.CreateTier, 'silver', '--min-iops',
                               '40', '--max-iops', '400', '--weight', '2.5')
        self.assertEqual({'name': 'silver', 'min_iops': 40.0,
                          'max_iops': 400.0, 'weight': 2.5,
                          'min_bytes_sec': 0.0, 'max_bytes_sec': 0.0,
                          'min_memory_mb': 0.0}, created)
        self.assertEqual(50.0, self.json_of(
            tier.SetTier, 'silver', '--min-iops', '50')['min_iops'])
        self.assertEqual(400.0, self.json_of(
            tier.ShowTier, 'silver')['max_iops'])
        self.assertEqual(['gold', 'silver'], [
            row['name'] for row in self.json_of(tier.ListTier)])
        self.run_command(tier.DeleteTier, 'silver')
        self.assertEqual(['gold'], [
            row['name'] for row in self.json_of(tier.ListTier)])

    def test_list_formats_and_columns(self):
        self.assertEqual('gold 100.0\n', self.run_command(
            tier.ListTier, '-f', 'value', '-c', 'name', '-c', 'min_iops'))
        self.assertEqual('"name","weight"\n"gold",4.0\n', self.run_command(
            tier.ListTier, '-f', 'csv', '-c', 'name', '-c', 'weight'))
        self.assertEqual([{'name': 'gold', 'weight': 4.0}],
                         yaml.safe_load(self.run_command(
                             tier.ListTier, '-f', 'yaml', '-c', 'name',
                             '-c', 'weight')))

    def test_the_apis_error_is_the_commands_error(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                tier.CreateTier, 'bronze', '--weight',
                                '5000')
        self.assertEqual('weight: must be in [0.001, 1000], got 5000 '
                         '(HTTP 400)', str(exc))
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                tier.DeleteTier, 'gold')
        self.assertIn('is used by 1 flavor(s): m1.gold (f-gold) and 1 '
                      'instance(s)', str(exc))
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                tier.CreateTier, 'bronze', headers=ALICE)
        self.assertEqual('policy does not allow iothrottle:tiers:create to '
                         'be performed (HTTP 403)', str(exc))

    def test_force_deletes_a_tier_in_use(self):
        self.assertEqual('', self.run_command(tier.DeleteTier, 'gold',
                                              '--force'))
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                tier.ShowTier, 'gold')
        self.assertIn('(HTTP 404)', str(exc))

    def test_a_bad_number_is_refused_before_any_request(self):
        parser = tier.CreateTier(App(None), None).get_parser('x')
        self.useFixture(fixtures_lib.MockPatchObject(parser, 'exit',
                                                     side_effect=ValueError))
        self.useFixture(fixtures_lib.MonkeyPatch('sys.stderr', io.StringIO()))
        self.assertRaises(ValueError, parser.parse_args,
                          ['bronze', '--min-iops', 'lots'])


class TestDomainCommands(CommandTestCase):

    def test_list_show_set(self):
        listed = self.json_of(domain.ListDomain)
        self.assertEqual([('rbd:ceph/volumes', 1, 0.95, True)],
                         [(row['key'], row['caps_in_force'], row['load'],
                           row['saturated'])
                          for row in listed])
        shown = self.json_of(domain.ShowDomain, 'rbd:ceph/volumes')
        self.assertEqual((1800.0, 2, 1), (shown['load_iops'],
                                          shown['load_disks'],
                                          shown['load_caps']))
        self.assertTrue(shown['load_at'].endswith('Z'), shown['load_at'])
        self.assertEqual(1895.0, shown['policy_max_iops'])
        self.assertEqual({api_fixtures.UUID_A: 'capped',
                          api_fixtures.UUID_B: 'released'},
                         {disk['instance_uuid']: disk['state']
                          for disk in shown['disks']})
        declared = self.json_of(domain.SetDomain, 'nbd+unix:///s.sock',
                                '--max-iops', '96.5', '--max-bytes-sec',
                                '6177000')
        self.assertEqual(('nbd+unix:///s.sock', 96.5, 'config'),
                         (declared['key'], declared['max_iops'],
                          declared['capacity_source']))
        reset = self.json_of(domain.SetDomain, 'rbd:ceph/volumes',
                             '--reset-peak')
        self.assertEqual(0.0, reset['peak_iops'])

    def test_set_needs_something_to_change(self):
        self.assertRaises(exceptions.CommandError, self.run_command,
                          domain.SetDomain, 'rbd:ceph/volumes')


class TestServerShow(CommandTestCase):

    def test_by_name_for_its_project_member(self):
        shown = self.json_of(server.ShowServer, 'web-1', headers=ALICE)
        self.assertEqual((api_fixtures.UUID_A, 'web-1', 'proj-a', True),
                         (shown['id'], shown['name'], shown['project_id'],
                          shown['throttled']))
        self.assertEqual('capped', shown['disks'][0]['state'])
        self.assertNotIn(api_fixtures.UUID_B, json.dumps(shown))

    def test_by_id(self):
        shown = self.json_of(server.ShowServer, api_fixtures.UUID_B,
                             headers=ADMIN)
        self.assertEqual(('db-1', False), (shown['name'],
                                           shown['throttled']))

    def test_a_neighbours_server_is_refused(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                server.ShowServer, 'db-1', headers=ALICE)
        self.assertIn('(HTTP 403)', str(exc))

    def test_unknown_server(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                server.ShowServer, 'nope')
        self.assertIn("No server with a name or ID of 'nope'", str(exc))


class TestPoolCommands(CommandTestCase):

    def test_set_add_show_remove_delete(self):
        path = os.path.join(self.tmp, 'flash.json')
        with open(path, 'w') as stream:
            json.dump({'kind': 'flash', 'name': 'nvme',
                       'read_qd_curve': [[16.0, 438000.0]],
                       'write_qd_curve': [[16.0, 90000.0]]}, stream)
        shown = self.json_of(pool.SetPool, 'cinder-2@nvme#fast',
                             '--profile', path, '--scheduler', 'none')
        self.assertEqual(('flash', 'none'), (shown['kind'],
                                             shown['scheduler']))
        volume = self.json_of(pool.AddPoolVolume, 'cinder-2@nvme#fast',
                              'vol-1', '--size-gib', '2', '--tier', 'gold')
        self.assertEqual((2 * 1024 ** 3, 100.0),
                         (volume['size_bytes'], volume['min_iops']))
        self.assertEqual([('cinder-1@hdd#a', 0), ('cinder-2@nvme#fast', 1)],
                         [(row['pool'], row['volume_count'])
                          for row in self.json_of(pool.ListPool)])
        self.assertEqual(['vol-1'], [
            v['volume_id'] for v in self.json_of(
                pool.ShowPool, 'cinder-2@nvme#fast')['volumes']])
        self.run_command(pool.RemovePoolVolume, 'cinder-2@nvme#fast',
                         'vol-1')
        self.run_command(pool.DeletePool, 'cinder-2@nvme#fast')
        self.assertEqual(['cinder-1@hdd#a'], [
            row['pool'] for row in self.json_of(pool.ListPool)])

    def test_unreadable_profile(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                pool.SetPool, 'a@b#c', '--profile',
                                os.path.join(self.tmp, 'none.json'))
        self.assertIn('No such file', str(exc))


class TestDecisionAndFlavor(CommandTestCase):

    def test_decisions_filtered(self):
        self.assertEqual(2, len(self.json_of(decision.ListDecision)))
        rows = self.json_of(decision.ListDecision, '--server', 'db-1')
        self.assertEqual([('release', 'calm')],
                         [(row['action'], row['reason']) for row in rows])
        self.assertEqual([], self.json_of(
            decision.ListDecision, '--since', '2999-01-01T00:00:00Z'))
        self.assertEqual('cap\n', self.run_command(
            decision.ListDecision, '--limit', '1', '-f', 'value', '-c',
            'action'))

    def test_flavor_guarantee(self):
        shown = self.json_of(flavor.ShowFlavor, 'm1.gold')
        self.assertEqual(('gold', 100.0, None),
                         (shown['guarantee.tier'],
                          shown['guarantee.min_iops'], shown['error']))


class TestHostAdvise(CommandTestCase):

    def test_one_row_per_finding(self):
        rows = self.json_of(host_cmd.AdviseHost, 'cmp-1')
        self.assertEqual([('warning', 'vm1/vda', 'iothreads-missing', '002',
                           None)],
                         [(row['severity'], row['subject'], row['rule'],
                           row['seed'], row['measured']) for row in rows])
        self.assertIn('342k', rows[0]['effect'])
        self.assertEqual('note: cannot list /nonexistent: No such file or '
                         'directory\n', self.stderr)

    def test_columns(self):
        self.assertEqual('warning vm1/vda\n', self.run_command(
            host_cmd.AdviseHost, 'cmp-1', '-f', 'value', '-c', 'severity',
            '-c', 'subject'))

    def test_a_host_down_is_the_apis_one_line(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                host_cmd.AdviseHost, 'cmp-down')
        self.assertEqual('the agent of host cmp-down did not answer within '
                         '10 s (down, not running, or not in conductor '
                         'mode) (HTTP 503)', str(exc))

    def test_admin_only(self):
        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                host_cmd.AdviseHost, 'cmp-1', headers=ALICE)
        self.assertIn('(HTTP 403)', str(exc))


class TestPathQuoting(testtools.TestCase):

    def test_keys_keep_their_slashes_and_encode_the_rest(self):
        # '%2F' never passes devstack's Apache; '#' and '?' would end
        # the path.
        self.assertEqual('nbd+unix:///run/s.sock',
                         client_mod.quote_key('nbd+unix:///run/s.sock'))
        self.assertEqual('cinder-1@hdd%23a%3Fb%25',
                         client_mod.quote_key('cinder-1@hdd#a?b%'))
        self.assertEqual('a%2Fb', client_mod.quote('a/b'))
