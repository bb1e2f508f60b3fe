"""The operator API behind a real Keystone, driven by the real
``openstack`` command with the iothrottle plugin, deployed as devstack
deploys it: Apache in front, uWSGI behind, the API under ``/iothrottle``.

Keystone (``$IOTHROTTLE_KEYSTONE_VENV``, made by ``tools/test-keystone``)
runs on SQLite after ``keystone-manage db_sync``, ``fernet_setup``,
``credential_setup`` and ``bootstrap``, served from one process on
127.0.0.1.  The admin registers the ``iothrottle`` service and its
endpoint in the catalog, projects ``proj-a`` and ``proj-b`` with one
member each, and a service user for ``auth_token``.

The deployment is the one ``devstack/plugin.sh`` writes, taken from the
plugin itself: its ``stack`` phases run first in the sandbox of
``tests/unit/devstack`` (devstack's own ``write_uwsgi_config``, so a
pinned devstack tree is needed, ``$IOTHROTTLE_DEVSTACK_DIR``), and the
files it leaves are used as they are but for the paths that sandbox
cannot have: the uWSGI ini (``socket``, ``env`` of the config file), the
Apache site file (its ``ProxyPass "/iothrottle" "unix:...|uwsgi://..."``
line, the socket path), and the command line of the plugin's systemd
unit (``uwsgi --procname-prefix iothrottle-api --ini ... --venv ...``;
the uwsgi of this environment, its virtualenv).  Apache is Debian's
apache2 (``tools/test-keystone`` installs ``apache2-bin``), one instance
of its own on a free port with a minimal server config that loads
mod_proxy and mod_proxy_uwsgi and includes the site file.  The catalog's
endpoint is ``http://127.0.0.1:<port>/iothrottle``, as the plugin
registers ``$SERVICE_PROTOCOL://$SERVICE_HOST/iothrottle``.  The console
script ``iothrottle-api`` serves the same database on a port of its
own, checked with one token-authenticated request.  The database holds
what the conductor would have written: instance A of proj-a (capped
now), instance B of proj-b, and the last load of their storage domain.

Then, all through ``openstack`` and Apache: the admin creates a tier,
declares a storage domain's capacity (one key with ``//``, which Apache
merges) and reads its load, and cannot delete the tier A's flavor
names; alice (member of proj-a) reads A's throttle
state and gets 403 on B and on every write.  No test is skipped: a
missing Keystone, uwsgi, Apache or devstack tree fails with what
installs it.
"""

import datetime
import json
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import fixtures
import testtools

from iothrottle.controller import model
from iothrottle.db import api
from iothrottle.db import migration
from tests.unit.devstack import test_plugin as devstack_test

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VENV = os.environ.get('IOTHROTTLE_KEYSTONE_VENV',
                      os.path.join(REPO, '.tox', 'keystone-venv'))
OPENSTACK = os.path.join(os.path.dirname(sys.executable), 'openstack')
# uWSGI of the project's environment (test-requirements.txt).
UWSGI = os.path.join(os.path.dirname(sys.executable), 'uwsgi')
# Debian's apache2-bin: the server and its modules.
APACHE = '/usr/sbin/apache2'
APACHE_MODULES = '/usr/lib/apache2/modules'
# Debian's user for Apache's workers when the test runs as root (Apache
# refuses to serve as root).
APACHE_USER = 'www-data'
HOST = '127.0.0.1'
# Seconds a server may take to answer after it starts.
START_DEADLINE_S = 60.0
ADMIN_PASSWORD = 'admin-secret'
UUID_A = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'
UUID_B = '0b9e2c3a-1d4f-4e5a-8b6c-7d8e9f0a1b2c'
DOMAIN = 'rbd:ceph/volumes'
# A key with a run of slashes, which Apache merges in PATH_INFO.
NBD_DOMAIN = 'nbd+unix:///run/iothrottle/store.sock'
# Where devstack's Apache serves the API (IOTHROTTLE_API_URL_PATH).
PREFIX = '/iothrottle'

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


def wait_for_socket(path, process, log):
    """Until the unix socket ``path`` accepts a connection; fail if
    ``process`` exits or the deadline passes."""
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError('%s: its server exited %s:\n%s' % (
                path, process.returncode, open(log).read()[-3000:]))
        with socket.socket(socket.AF_UNIX) as sock:
            try:
                sock.connect(path)
                return
            except OSError:
                time.sleep(0.2)
    raise AssertionError('%s did not accept in %ds'
                         % (path, START_DEADLINE_S))


# The server config of the test's own Apache: only what devstack's
# Apache has that the site file needs (mod_proxy, mod_proxy_uwsgi).
APACHE_CONF = '''ServerRoot "%(run)s"
ServerName %(host)s
Listen %(host)s:%(port)d
PidFile "%(run)s/apache.pid"
DefaultRuntimeDir "%(run)s"
LoadModule mpm_event_module %(modules)s/mod_mpm_event.so
LoadModule authz_core_module %(modules)s/mod_authz_core.so
LoadModule proxy_module %(modules)s/mod_proxy.so
LoadModule proxy_uwsgi_module %(modules)s/mod_proxy_uwsgi.so
ErrorLog "%(logs)s/apache-error.log"
LogFormat "%%>s %%r" brief
CustomLog "%(logs)s/apache-access.log" brief
%(user)s
Include "%(site)s"
'''

# devstack's site line (lib/apache, write_uwsgi_config).
PROXY_PASS = re.compile(r'^ProxyPass "(?P<path>/[^"]*)" '
                        r'"unix:(?P<socket>[^|"]+)\|uwsgi://[^"]+"',
                        re.MULTILINE)


class PluginLayout:
    """What ``devstack/plugin.sh`` writes for iothrottle-api, from its
    ``stack`` phases run in the devstack sandbox of the unit tests:
    ``ini`` and ``site`` (texts of the uWSGI ini and of the Apache site
    file), ``argv`` (its systemd unit's command), ``url_path`` (the
    prefix Apache serves it under), ``socket`` and ``config_files``
    (the paths of the sandbox, to be replaced)."""

    def __init__(self, workdir):
        sandbox = devstack_test.Sandbox(pathlib.Path(workdir) / 'devstack',
                                        devstack_test.ALL_IN_ONE)
        sandbox.run_ok('stack')
        ini_path = sandbox.conf_dir / 'iothrottle-api-uwsgi.ini'
        self.ini = ini_path.read_text()
        uwsgi = devstack_test.read_ini(ini_path)['uwsgi']
        sites = sorted((sandbox.root / 'outside').glob(
            'etc/apache2/sites-available/*.conf'))
        if len(sites) != 1:
            raise AssertionError('expected one Apache site, the plugin '
                                 'wrote %s' % sites)
        self.site = sites[0].read_text()
        match = PROXY_PASS.search(self.site)
        if match is None or match.group('socket') != uwsgi['socket']:
            raise AssertionError('no ProxyPass to uwsgi socket %s in:\n%s'
                                 % (uwsgi['socket'], self.site))
        self.url_path = match.group('path')
        self.socket = uwsgi['socket']
        name, sep, self.config_files = uwsgi['env'].partition('=')
        if name != 'IOTHROTTLE_CONFIG_FILES' or not sep:
            raise AssertionError('uwsgi env: %r' % uwsgi['env'])
        self.argv = shlex.split(
            sandbox.unit('iothrottle-api')['Service']['ExecStart'])
        for option in ('--ini', '--venv'):
            if option not in self.argv[:-1]:
                raise AssertionError('no %s in %s' % (option, self.argv))
        shutil.rmtree(sandbox.root)

    def uwsgi_argv(self, uwsgi, ini, venv):
        """The unit's command with this machine's uwsgi, ini and venv."""
        argv = [uwsgi] + self.argv[1:]
        for option, value in (('--ini', ini), ('--venv', venv)):
            argv[argv.index(option) + 1] = value
        return argv


class KeystoneAndApi(fixtures.Fixture):
    """Keystone and iothrottle-api, running; ``openstack(...)`` as a
    user of Keystone."""

    def _setUp(self):
        manage = os.path.join(VENV, 'bin', 'keystone-manage')
        if not os.path.exists(manage):
            raise AssertionError('no Keystone at %s: run tools/test-keystone'
                                 % VENV)
        if not os.path.exists(UWSGI):
            raise AssertionError('no uwsgi at %s: pip install -r '
                                 'test-requirements.txt' % UWSGI)
        if not os.path.exists(APACHE):
            raise AssertionError('no Apache at %s: run tools/test-keystone '
                                 '(apt-get install apache2-bin)' % APACHE)
        self.dir = self.useFixture(fixtures.TempDir()).path
        # Apache's workers (www-data when run as root) reach the socket
        # and its runtime files here.
        self.run_dir = tempfile.mkdtemp(prefix='iothrottle-apache-')
        self.addCleanup(shutil.rmtree, self.run_dir, True)
        os.chmod(self.run_dir, 0o755)
        self.layout = PluginLayout(self.dir)
        self.keystone_port, self.apache_port, self.console_port = (
            free_port(), free_port(), free_port())
        self.auth_url = 'http://%s:%d/v3' % (HOST, self.keystone_port)
        # As the plugin registers it: $SERVICE_PROTOCOL://$SERVICE_HOST
        # followed by the path Apache proxies.
        self.api_url = 'http://%s:%d%s' % (HOST, self.apache_port,
                                           self.layout.url_path)
        self.console_url = 'http://%s:%d' % (HOST, self.console_port)
        self._keystone(manage)
        self._catalog_and_users()
        self._api()

    def _start(self, name, argv, env, url=None, unix_socket=None):
        """Start ``argv``, logging to ``name``.log; wait until ``url``
        answers or ``unix_socket`` accepts."""
        log = os.path.join(self.dir, name + '.log')
        with open(log, 'w') as stream:
            process = subprocess.Popen(argv, env=env, stdout=stream,
                                       stderr=subprocess.STDOUT)
        self.addCleanup(process.wait, 10)
        self.addCleanup(process.terminate)
        if unix_socket:
            wait_for_socket(unix_socket, process, log)
        else:
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

    def _conf(self, name, url, port=None):
        """An iothrottle.conf of the API logging to ``name``.log (and
        listening on ``port``, for the console script)."""
        conf = os.path.join(self.dir, name + '.conf')
        with open(conf, 'w') as stream:
            if port is not None:
                stream.write('[api]\nhost = %s\nport = %d\n' % (HOST, port))
            stream.write(
                '[DEFAULT]\nlog_file = %(dir)s/%(name)s-service.log\n'
                '[database]\nconnection = %(url)s\n'
                '[keystone_authtoken]\nwww_authenticate_uri = %(auth)s\n'
                'auth_url = %(auth)s\nauth_type = password\n'
                'username = iothrottle\npassword = iothrottle-secret\n'
                'project_name = service\nuser_domain_name = Default\n'
                'project_domain_name = Default\n'
                % {'dir': self.dir, 'name': name, 'url': url,
                   'auth': self.auth_url})
        return conf

    def _api(self):
        url = 'sqlite:///%s/iothrottle.sqlite' % self.dir
        engine = api.create_engine(url)
        self.addCleanup(engine.dispose)
        migration.upgrade(engine)
        seed(engine, self.projects)
        env = dict(os.environ, PYTHONPATH=REPO)
        self._uwsgi_and_apache(url, env)
        self._start('iothrottle-api',
                    [sys.executable, '-m', 'iothrottle.cmd.api',
                     '--config-file', self._conf('iothrottle-api', url,
                                                 self.console_port)],
                    env, self.console_url + '/')

    def _uwsgi_and_apache(self, url, env):
        """The plugin's uWSGI on a unix socket and Apache in front."""
        layout = self.layout
        sock = os.path.join(self.run_dir, 'iothrottle-api.socket')
        conf = self._conf('iothrottle-api-uwsgi', url)
        ini = os.path.join(self.dir, 'iothrottle-api-uwsgi.ini')
        with open(ini, 'w') as stream:
            stream.write(layout.ini.replace(layout.socket, sock).replace(
                'IOTHROTTLE_CONFIG_FILES=' + layout.config_files,
                'IOTHROTTLE_CONFIG_FILES=' + conf))
        site = os.path.join(self.dir, 'iothrottle-api-site.conf')
        with open(site, 'w') as stream:
            stream.write(layout.site.replace(layout.socket, sock))
        self._start('iothrottle-api-uwsgi',
                    layout.uwsgi_argv(UWSGI, ini, sys.prefix), env,
                    unix_socket=sock)
        apache_conf = os.path.join(self.dir, 'apache.conf')
        with open(apache_conf, 'w') as stream:
            stream.write(APACHE_CONF % {
                'run': self.run_dir, 'host': HOST, 'port': self.apache_port,
                'modules': APACHE_MODULES, 'logs': self.dir, 'site': site,
                'user': ('User %s\nGroup %s' % (APACHE_USER, APACHE_USER)
                         if os.geteuid() == 0 else '')})
        self._start('apache', [APACHE, '-f', apache_conf, '-DFOREGROUND'],
                    dict(os.environ), self.api_url + '/')

    def apache_requests(self):
        """Apache's access log: one "STATUS METHOD PATH PROTOCOL" a
        request."""
        with open(os.path.join(self.dir, 'apache-access.log')) as stream:
            return stream.read().splitlines()


def seed(engine, projects):
    """What the conductor would have written: A of proj-a (its flavor
    names tier gold) capped now, B of proj-b released."""
    now = datetime.datetime.now(datetime.timezone.utc)
    api.record_instances(engine, [
        api.InstanceRecord(UUID_A, projects['proj-a'], tier='gold'),
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
        self.assertEqual(PREFIX, self.cloud.layout.url_path)
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
        # A key with '//': Apache merges it in PATH_INFO, the API routes
        # on the path the client sent.
        self.cloud.admin('iothrottle', 'domain', 'set', NBD_DOMAIN,
                         '--max-iops', '96.5', '--max-bytes-sec', '6177000')
        shown = json.loads(self.cloud.admin(
            'iothrottle', 'domain', 'show', NBD_DOMAIN, '-f', 'json').stdout)
        self.assertEqual((NBD_DOMAIN, 96.5), (shown['key'],
                                              shown['max_iops']))
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

        # A's flavor names gold; the API has no [nova] credentials here.
        refused = self.cloud.admin('iothrottle', 'tier', 'delete', 'gold',
                                   check=False)
        self.assertNotEqual(0, refused.returncode)
        self.assertIn("tier 'gold' is used by 1 instance(s): %s (Nova's "
                      "flavors not checked" % UUID_A, refused.stderr)
        self.assertIn('(HTTP 409)', refused.stderr)

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
            self.assertEqual([(NBD_DOMAIN, None), (DOMAIN, True)], [
                (domain['key'], domain['saturated']) for domain in listed])
            refused = self.assertRaises(
                urllib.error.HTTPError, urllib.request.urlopen,
                base + '/storage_domains', timeout=10)
            self.assertEqual(401, refused.code)

        # The version document's link is the catalog's endpoint, prefix
        # included, and every command went through Apache.
        with urllib.request.urlopen(self.cloud.api_url,
                                    timeout=10) as response:
            version = json.load(response)['versions'][0]
        self.assertEqual(self.cloud.api_url + '/',
                         version['links'][0]['href'])
        requests = self.cloud.apache_requests()
        for line in ('201 POST %s/tiers HTTP/1.1' % PREFIX,
                     '200 GET %s/instances/%s HTTP/1.1' % (PREFIX, UUID_A),
                     '403 GET %s/instances/%s HTTP/1.1' % (PREFIX, UUID_B),
                     '200 PUT %s/storage_domains/%s HTTP/1.1' % (
                         PREFIX, NBD_DOMAIN)):
            self.assertIn(line, requests)
