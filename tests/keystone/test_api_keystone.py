"""The operator API behind a real Keystone, driven by the real
``openstack`` command with the iothrottle plugin.

Keystone (``$IOTHROTTLE_KEYSTONE_VENV``, made by ``tools/test-keystone``)
runs on SQLite after ``keystone-manage db_sync``, ``fernet_setup``,
``credential_setup`` and ``bootstrap``, served from one process on
127.0.0.1.  The admin registers the ``iothrottle`` service and its
endpoint in the catalog, projects ``proj-a`` and ``proj-b`` with one
member each, and a service user for ``auth_token``.  The API runs with
``[api] auth_strategy = keystone`` as OpenStack deploys it: the WSGI
module ``iothrottle.wsgi.api:application`` under uWSGI (master, one
worker of two threads), its configuration from
``IOTHROTTLE_CONFIG_FILES``; that is the endpoint in the catalog.  The
console script ``iothrottle-api`` serves the same database on a second
port, checked with one token-authenticated request.  The database holds
what the conductor would have written: instance A of proj-a (capped
now), instance B of proj-b, and the last load of their storage domain.

Then, all through ``openstack``: the admin creates a tier, declares a
storage domain's capacity and reads its load; alice (member of proj-a)
reads A's throttle state and gets 403 on B and on every write.  No test
is skipped: a missing Keystone or uwsgi fails with what installs it.
"""

import datetime
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fixtures
import testtools

from iothrottle.controller import model
from iothrottle.db import api
from iothrottle.db import migration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VENV = os.environ.get('IOTHROTTLE_KEYSTONE_VENV',
                      os.path.join(REPO, '.tox', 'keystone-venv'))
OPENSTACK = os.path.join(os.path.dirname(sys.executable), 'openstack')
# uWSGI of the project's environment (test-requirements.txt).
UWSGI = os.path.join(os.path.dirname(sys.executable), 'uwsgi')
HOST = '127.0.0.1'
# Seconds a server may take to answer after it starts.
START_DEADLINE_S = 60.0
ADMIN_PASSWORD = 'admin-secret'
UUID_A = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'
UUID_B = '0b9e2c3a-1d4f-4e5a-8b6c-7d8e9f0a1b2c'
DOMAIN = 'rbd:ceph/volumes'

# Keystone parses sys.argv itself: the port comes in the environment.
KEYSTONE_SERVER = '''
import os
from wsgiref import simple_server
from keystone.server import wsgi
app = wsgi.initialize_public_application()
simple_server.make_server(%r, int(os.environ['KEYSTONE_PORT']),
                          app).serve_forever()
''' % HOST


def free_port():
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_for(url, process, log):
    """Until ``url`` answers (any HTTP status); fail if ``process``
    exits or the deadline passes."""
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError('%s exited %s:\n%s' % (
                url, process.returncode, open(log).read()[-3000:]))
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError('%s did not answer in %ds' % (url,
                                                       START_DEADLINE_S))


class KeystoneAndApi(fixtures.Fixture):
    """Keystone and iothrottle-api, running; ``openstack(...)`` as a
    user of Keystone."""

    def _setUp(self):
        manage = os.path.join(VENV, 'bin', 'keystone-manage')
        if not os.path.exists(manage):
            raise AssertionError('no Keystone at %s: run tools/test-keystone'
                                 % VENV)
        self.dir = self.useFixture(fixtures.TempDir()).path
        if not os.path.exists(UWSGI):
            raise AssertionError('no uwsgi at %s: pip install -r '
                                 'test-requirements.txt' % UWSGI)
        self.keystone_port, self.api_port, self.console_port = (
            free_port(), free_port(), free_port())
        self.auth_url = 'http://%s:%d/v3' % (HOST, self.keystone_port)
        self.api_url = 'http://%s:%d' % (HOST, self.api_port)
        self.console_url = 'http://%s:%d' % (HOST, self.console_port)
        self._keystone(manage)
        self._catalog_and_users()
        self._api()

    def _start(self, name, argv, env, url):
        log = os.path.join(self.dir, name + '.log')
        with open(log, 'w') as stream:
            process = subprocess.Popen(argv, env=env, stdout=stream,
                                       stderr=subprocess.STDOUT)
        self.addCleanup(process.wait, 10)
        self.addCleanup(process.terminate)
        wait_for(url, process, log)

    def _keystone(self, manage):
        conf = os.path.join(self.dir, 'keystone.conf')
        with open(conf, 'w') as stream:
            stream.write(
                '[DEFAULT]\nlog_file = %(dir)s/keystone-service.log\n'
                '[database]\nconnection = sqlite:///%(dir)s/keystone.db\n'
                '[fernet_tokens]\nkey_repository = %(dir)s/fernet\n'
                '[fernet_receipts]\nkey_repository = %(dir)s/receipts\n'
                '[credential]\nkey_repository = %(dir)s/credential\n'
                % {'dir': self.dir})
        user = subprocess.run(['id', '-un'], capture_output=True, text=True,
                              check=True).stdout.strip()
        group = subprocess.run(['id', '-gn'], capture_output=True,
                               text=True, check=True).stdout.strip()
        for args in (['db_sync'],
                     ['fernet_setup', '--keystone-user', user,
                      '--keystone-group', group],
                     ['credential_setup', '--keystone-user', user,
                      '--keystone-group', group],
                     ['bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                      '--bootstrap-admin-url', self.auth_url,
                      '--bootstrap-public-url', self.auth_url,
                      '--bootstrap-internal-url', self.auth_url,
                      '--bootstrap-region-id', 'RegionOne']):
            subprocess.run([manage, '--config-file', conf] + args,
                           check=True, capture_output=True)
        env = dict(os.environ, OS_KEYSTONE_CONFIG_FILES=conf,
                   KEYSTONE_PORT=str(self.keystone_port))
        self._start('keystone', [os.path.join(VENV, 'bin', 'python'), '-c',
                                 KEYSTONE_SERVER], env, self.auth_url)

    def openstack(self, user, password, project, *argv, check=True):
        """``openstack`` as ``user`` scoped to ``project``; its result."""
        env = dict(os.environ, OS_AUTH_URL=self.auth_url,
                   OS_USERNAME=user, OS_PASSWORD=password,
                   OS_PROJECT_NAME=project, OS_USER_DOMAIN_NAME='Default',
                   OS_PROJECT_DOMAIN_NAME='Default',
                   OS_IDENTITY_API_VERSION='3', OS_INTERFACE='public',
                   OS_REGION_NAME='RegionOne', PYTHONPATH=REPO)
        result = subprocess.run([OPENSTACK] + list(argv), env=env,
                                capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise AssertionError('openstack %s: exit %d\n%s' % (
                ' '.join(argv), result.returncode, result.stderr[-2000:]))
        return result

    def admin(self, *argv, check=True):
        return self.openstack('admin', ADMIN_PASSWORD, 'admin', *argv,
                              check=check)

    def _catalog_and_users(self):
        self.admin('service', 'create', '--name', 'iothrottle',
                   'iothrottle')
        self.admin('endpoint', 'create', '--region', 'RegionOne',
                   'iothrottle', 'public', self.api_url)
        roles = json.loads(self.admin('role', 'list', '-f', 'json').stdout)
        if 'service' not in {role['Name'] for role in roles}:
            self.admin('role', 'create', 'service')
        for project in ('service', 'proj-a', 'proj-b'):
            self.admin('project', 'create', project)
        self.projects = {
            name: json.loads(self.admin('project', 'show', name, '-f',
                                        'json').stdout)['id']
            for name in ('proj-a', 'proj-b')}
        for user, project, role in (('iothrottle', 'service', 'service'),
                                    ('alice', 'proj-a', 'member'),
                                    ('bob', 'proj-b', 'member')):
            self.admin('user', 'create', '--password', user + '-secret',
                       user)
            self.admin('role', 'add', '--user', user, '--project', project,
                       role)

    def _conf(self, name, url, port):
        """An iothrottle.conf of the API logging to ``name``.log."""
        conf = os.path.join(self.dir, name + '.conf')
        with open(conf, 'w') as stream:
            stream.write(
                '[DEFAULT]\nlog_file = %(dir)s/%(name)s-service.log\n'
                '[api]\nhost = %(host)s\nport = %(port)d\n'
                '[database]\nconnection = %(url)s\n'
                '[keystone_authtoken]\nwww_authenticate_uri = %(auth)s\n'
                'auth_url = %(auth)s\nauth_type = password\n'
                'username = iothrottle\npassword = iothrottle-secret\n'
                'project_name = service\nuser_domain_name = Default\n'
                'project_domain_name = Default\n'
                % {'dir': self.dir, 'name': name, 'host': HOST,
                   'port': port, 'url': url, 'auth': self.auth_url})
        return conf

    def _api(self):
        url = 'sqlite:///%s/iothrottle.sqlite' % self.dir
        engine = api.create_engine(url)
        self.addCleanup(engine.dispose)
        migration.upgrade(engine)
        seed(engine, self.projects)
        env = dict(os.environ, PYTHONPATH=REPO)
        # As OpenStack deploys it: the WSGI module under uWSGI, the
        # configuration from the environment (no --config-file).
        self._start('iothrottle-api-uwsgi',
                    [UWSGI, '--http-socket', '%s:%d' % (HOST, self.api_port),
                     '--module', 'iothrottle.wsgi.api:application',
                     '--virtualenv', sys.prefix, '--need-app', '--master',
                     '--processes', '1', '--threads', '2',
                     '--die-on-term'],
                    dict(env, IOTHROTTLE_CONFIG_FILES=self._conf(
                        'iothrottle-api-uwsgi', url, self.api_port)),
                    self.api_url + '/')
        self._start('iothrottle-api',
                    [sys.executable, '-m', 'iothrottle.cmd.api',
                     '--config-file', self._conf('iothrottle-api', url,
                                                 self.console_port)],
                    env, self.console_url + '/')


def seed(engine, projects):
    """What the conductor would have written: A of proj-a capped now, B
    of proj-b released."""
    now = datetime.datetime.now(datetime.timezone.utc)
    api.record_instances(engine, [
        api.InstanceRecord(UUID_A, projects['proj-a']),
        api.InstanceRecord(UUID_B, projects['proj-b'])])
    api.record_decisions(engine, DOMAIN, [model.Decision(
        UUID_B, 'vda', model.RELEASE, 'calm')], 'guarantee',
        decided_at=now - datetime.timedelta(seconds=30))
    api.record_decisions(engine, DOMAIN, [model.Decision(
        UUID_A, 'vda', model.CAP, 'saturated; at or under guarantee: '
        '%s/vda (40 %% of guarantee)' % UUID_B,
        model.Cap(iops=40, bytes_sec=0), lease_s=3600)], 'guarantee',
        decided_at=now)
    api.record_domain_load(engine, DOMAIN, model.DomainLoad(
        iops=1900, bytes_sec=2.5e7, load=0.95, saturated=True, disks=2,
        caps=1), measured_at=now)


class TestApiBehindKeystone(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.assertTrue(os.path.exists(OPENSTACK), OPENSTACK)
        self.cloud = self.useFixture(KeystoneAndApi())

    def alice(self, *argv, check=True):
        return self.cloud.openstack('alice', 'alice-secret', 'proj-a',
                                    *argv, check=check)

    def assertForbidden(self, result):
        self.assertNotEqual(0, result.returncode)
        self.assertIn('(HTTP 403)', result.stderr)

    def test_admin_writes_and_a_member_reads_its_own_instance_only(self):
        created = json.loads(self.cloud.admin(
            'iothrottle', 'tier', 'create', 'gold', '--min-iops', '100',
            '--weight', '4', '-f', 'json').stdout)
        self.assertEqual((100.0, 4.0), (created['min_iops'],
                                        created['weight']))
        declared = json.loads(self.cloud.admin(
            'iothrottle', 'domain', 'set', DOMAIN, '--max-iops', '2000',
            '--max-bytes-sec', '500000000', '-f', 'json').stdout)
        self.assertEqual(('config', 2000.0), (declared['capacity_source'],
                                              declared['max_iops']))
        self.assertEqual((0.95, True, 1900.0, 1),
                         (declared['load'], declared['saturated'],
                          declared['load_iops'], declared['load_caps']))
        self.assertEqual(
            'gold\n', self.alice('iothrottle', 'tier', 'list', '-f',
                                 'value', '-c', 'name').stdout)

        mine = json.loads(self.alice('iothrottle', 'server', 'show', UUID_A,
                                     '-f', 'json').stdout)
        self.assertEqual((UUID_A, self.cloud.projects['proj-a'], True),
                         (mine['id'], mine['project_id'],
                          mine['throttled']))
        self.assertEqual(('capped', 40.0), (mine['disks'][0]['state'],
                                            mine['disks'][0]['cap_iops']))
        self.assertNotIn(UUID_B, json.dumps(mine))

        self.assertForbidden(self.alice('iothrottle', 'server', 'show',
                                        UUID_B, check=False))
        for argv in (('tier', 'create', 'tin'),
                     ('tier', 'set', 'gold', '--min-iops', '1000'),
                     ('tier', 'delete', 'gold'),
                     ('domain', 'set', DOMAIN, '--reset-peak'),
                     ('domain', 'list'),
                     ('decision', 'list')):
            self.assertForbidden(self.alice('iothrottle', *argv,
                                            check=False))

        admin_view = json.loads(self.cloud.admin(
            'iothrottle', 'decision', 'list', '-f', 'json').stdout)
        self.assertEqual([UUID_A, UUID_B], [row['instance_uuid']
                                            for row in admin_view])

        # Both servers check tokens with Keystone: uWSGI's (the catalog's)
        # and the console script's.
        token = self.cloud.admin('token', 'issue', '-f', 'value', '-c',
                                 'id').stdout.strip()
        for base in (self.cloud.api_url, self.cloud.console_url):
            request = urllib.request.Request(
                base + '/storage_domains', headers={'X-Auth-Token': token})
            with urllib.request.urlopen(request, timeout=10) as response:
                listed = json.load(response)['storage_domains']
            self.assertEqual([(DOMAIN, True)], [
                (domain['key'], domain['saturated']) for domain in listed])
            refused = self.assertRaises(
                urllib.error.HTTPError, urllib.request.urlopen,
                base + '/storage_domains', timeout=10)
            self.assertEqual(401, refused.code)
