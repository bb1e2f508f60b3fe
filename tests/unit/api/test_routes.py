"""Every route of the route table is exercised by a gabbi test, and
the pipeline's edges: Keystone's auth_token in front, JSON 503 and 500
for failures below the handlers."""

import glob
import json
import os
import urllib.parse

import fixtures as fixtures_lib
import sqlalchemy as sa
import testtools
import webob
import yaml

from iothrottle.api import config
from iothrottle.api import deploy
from iothrottle.api import handler
from iothrottle.api import policies
from iothrottle.db import api
from tests.unit.api import fixtures
from tests.unit.db import base as db_base

METHODS = ('GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH')
GABBITS = os.path.join(os.path.dirname(__file__), 'gabbits')


def gabbi_requests():
    """(method, path) of every gabbi test, $ENVIRON filled in."""
    env = {'UUID_A': fixtures.UUID_A, 'UUID_B': fixtures.UUID_B,
           'UUID_UNKNOWN': fixtures.UUID_UNKNOWN}
    found = []
    for path in sorted(glob.glob(os.path.join(GABBITS, '*.yaml'))):
        with open(path) as stream:
            for test in yaml.safe_load(stream)['tests']:
                for method in METHODS:
                    if method in test:
                        url = test[method]
                        for name, value in env.items():
                            url = url.replace("$ENVIRON['%s']" % name, value)
                        found.append((method, urllib.parse.unquote(
                            urllib.parse.urlsplit(url).path)))
    return found


class TestEveryRouteIsTested(testtools.TestCase):

    def test_each_method_of_each_route_has_a_gabbi_test(self):
        mapper = handler.make_map(handler.ROUTE_DECLARATIONS)
        hit = set()
        for method, path in gabbi_requests():
            match = mapper.match(path, environ={'REQUEST_METHOD': method})
            if match is not None:
                hit.add(match['action'])
        declared = {action for _path, methods in handler.ROUTE_DECLARATIONS
                    for action in methods.values()}
        self.assertEqual([], sorted(action.func.__name__
                                    for action in declared - hit))

    def test_every_route_has_a_policy(self):
        operations = {(op['method'], op['path'])
                      for rule in policies.list_rules()
                      for op in getattr(rule, 'operations', ())}
        for path, methods in handler.ROUTE_DECLARATIONS:
            if path in ('/', ''):
                continue
            plain = path.replace('{key:.+}', '{key}').replace(
                '{pool:.+}', '{pool}')
            for method in methods:
                self.assertIn((method, plain), operations)


class PipelineTestCase(testtools.TestCase):

    def conf(self, **api_opts):
        conf = config.build_conf([], default_config_files=[])
        for name, value in api_opts.items():
            conf.set_override(name, value, 'api')
        return conf

    def request(self, app, path, token=None):
        req = webob.Request.blank(path)
        if token:
            req.headers['X-Auth-Token'] = token
            req.headers['X-Roles'] = 'admin,member,reader'
        response = req.get_response(app)
        return response.status_int, response.body


class TestKeystonePipeline(PipelineTestCase):

    def test_auth_token_guards_all_but_the_root(self):
        engine = self.useFixture(db_base.SyncedDatabase()).engine
        path = os.path.join(self.useFixture(fixtures_lib.TempDir()).path,
                            'iothrottle.conf')
        with open(path, 'w') as stream:
            stream.write('[keystone_authtoken]\n'
                         'www_authenticate_uri = http://192.0.2.1:5000/v3\n')
        self.useFixture(fixtures_lib.FakeLogger())
        app = deploy.deploy(config.build_conf(
            [], default_config_files=[path]), engine)
        # No token: auth_token answers 401 itself, Keystone not asked.
        req = webob.Request.blank('/tiers')
        response = req.get_response(app)
        self.assertEqual(401, response.status_int)
        self.assertEqual('Keystone uri="http://192.0.2.1:5000/v3"',
                         response.headers['WWW-Authenticate'])
        status, body = self.request(app, '/')
        self.assertEqual(200, status)
        self.assertEqual('v1.0', json.loads(body)['versions'][0]['id'])


class TestFaults(PipelineTestCase):

    def test_database_unreachable_is_a_json_503(self):
        engine = api.create_engine('sqlite:////nonexistent/dir/x.sqlite')
        self.addCleanup(engine.dispose)
        app = deploy.deploy(self.conf(auth_strategy='noauth2'), engine)
        status, body = self.request(app, '/tiers', 'admin:p')
        self.assertEqual(503, status)
        self.assertEqual('the database cannot be reached',
                         json.loads(body)['errors'][0]['detail'])

    def test_unexpected_error_is_a_json_500_without_traceback(self):
        engine = self.useFixture(db_base.SyncedDatabase()).engine
        self.useFixture(fixtures_lib.MockPatchObject(
            api, 'list_tiers', side_effect=sa.exc.InvalidRequestError(
                'secret internals')))
        self.useFixture(fixtures_lib.FakeLogger())
        app = deploy.deploy(self.conf(auth_strategy='noauth2'), engine)
        status, body = self.request(app, '/tiers', 'admin:p')
        self.assertEqual(500, status)
        self.assertNotIn(b'secret internals', body)
        self.assertEqual(500, json.loads(body)['errors'][0]['status'])


class TestBehindAProxy(PipelineTestCase):
    """The environ devstack's Apache (mod_proxy_uwsgi, ``ProxyPass
    "/iothrottle"``) gives the application, as measured with Apache
    2.4.71: SCRIPT_NAME the prefix, PATH_INFO with slashes merged,
    REQUEST_URI as the client sent it."""

    KEY = 'nbd+unix:///run/store.sock'

    def setUp(self):
        super().setUp()
        engine = self.useFixture(db_base.SyncedDatabase()).engine
        api.declare_capacity(engine, self.KEY, 100, 1e6)
        self.app = deploy.deploy(self.conf(auth_strategy='noauth2'), engine)

    def get(self, script_name, path_info, request_uri):
        req = webob.Request.blank(path_info, base_url='http://192.0.2.5:80')
        req.environ.update(SCRIPT_NAME=script_name, PATH_INFO=path_info,
                           REQUEST_URI=request_uri)
        req.headers['X-Auth-Token'] = 'admin:p'
        req.headers['X-Roles'] = 'admin,member,reader'
        response = req.get_response(self.app)
        return response.status_int, json.loads(response.body)

    def test_a_key_whose_slashes_apache_merged_is_found(self):
        status, body = self.get(
            '/iothrottle', '/storage_domains/nbd+unix:/run/store.sock',
            '/iothrottle/storage_domains/nbd+unix:///run/store.sock')
        self.assertEqual(200, status)
        self.assertEqual(self.KEY, body['storage_domain']['key'])

    def test_without_request_uri_the_path_info_is_routed(self):
        req = webob.Request.blank('/storage_domains/' + self.KEY)
        req.headers['X-Auth-Token'] = 'admin:p'
        req.headers['X-Roles'] = 'admin,member,reader'
        self.assertNotIn('REQUEST_URI', req.environ)
        self.assertEqual(200, req.get_response(self.app).status_int)

    def test_version_document_links_to_the_prefix(self):
        for script_name, uri in (('/iothrottle', '/iothrottle'),
                                 ('/iothrottle/', '/iothrottle/')):
            status, body = self.get(script_name, '/', uri)
            self.assertEqual(200, status)
            self.assertEqual('http://192.0.2.5/iothrottle/',
                             body['versions'][0]['links'][0]['href'])

    def test_created_tier_location_is_under_the_prefix(self):
        req = webob.Request.blank('/tiers', method='POST',
                                  base_url='http://192.0.2.5:80')
        req.environ.update(SCRIPT_NAME='/iothrottle', PATH_INFO='/tiers',
                           REQUEST_URI='/iothrottle/tiers')
        req.headers['X-Auth-Token'] = 'admin:p'
        req.headers['X-Roles'] = 'admin,member,reader'
        req.content_type = 'application/json'
        req.json = {'name': 'gold', 'min_iops': 10}
        response = req.get_response(self.app)
        self.assertEqual(201, response.status_int)
        self.assertEqual('http://192.0.2.5/iothrottle/tiers/gold',
                         response.location)
