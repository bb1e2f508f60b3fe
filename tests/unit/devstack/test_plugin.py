"""devstack/plugin.sh run by devstack's own functions, without a network.

``devstack_run.sh`` sources a pinned copy of devstack (its stackrc,
functions and lib/), then the plugin's phases as stack.sh, unstack.sh
and clean.sh run them, in a sandbox: Nova's, Cinder's and iothrottle's
configuration files and the systemd units are files of the sandbox;
what would reach outside (``sudo`` outside the sandbox, ``systemctl``,
``openstack``, ``mysql``, ``pip``, ``uwsgi``, ``curl``, and
``iothrottle-manage``, which would talk to MySQL) is
``tests/unit/devstack/stub``, which records each call.

The devstack copy is ``$IOTHROTTLE_DEVSTACK_DIR`` if set, else
``shared/devstack`` beside the repository (``../shared/devstack``
relative to its top directory).
"""

import configparser
import os
import pathlib
import shlex
import shutil
import subprocess

import fixtures
from keystoneauth1 import loading as ks_loading
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.cmd import conductor as conductor_cmd  # noqa: E402
from iothrottle.cmd import manage  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle import extra_specs  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from tests import cli  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
RUNNER = HERE / 'devstack_run.sh'
DEVSTACK_ENV = 'IOTHROTTLE_DEVSTACK_DIR'
# Seconds one devstack script may take in the sandbox (about 8 here).
RUN_TIMEOUT_S = 120
# What the stub and the runner give devstack.
SERVICE_HOST = '192.0.2.10'
RABBIT_URL = 'rabbit://stackrabbit:rabbit-secret@%s:5672/' % SERVICE_HOST
# The services of an all-in-one devstack: stackrc's default list
# (Keystone, Nova, Placement, Glance, Cinder, Neutron, RabbitMQ, MySQL).
ALL_IN_ONE = None


def devstack_dir():
    """The devstack copy the test sources; fails the test if absent."""
    path = pathlib.Path(os.environ.get(DEVSTACK_ENV)
                        or REPO.parent / 'shared' / 'devstack')
    if not (path / 'functions').is_file() or not (path / 'stackrc').is_file():
        raise AssertionError(
            'no devstack copy at %s (set %s to a devstack tree)'
            % (path, DEVSTACK_ENV))
    return path


def read_ini(path):
    """An INI file (a config file or a systemd unit) as written."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    with open(path) as stream:
        parser.read_file(stream)
    return parser


def setup_cfg_entry_points(group):
    """``name = target`` of an entry point group of setup.cfg."""
    parser = read_ini(REPO / 'setup.cfg')
    points = {}
    for line in parser['entry_points'][group].strip().splitlines():
        name, _sep, target = line.partition('=')
        points[name.strip()] = target.strip()
    return points


class Sandbox:
    """One node's devstack: a directory, and the scripts run in it."""

    def __init__(self, root, services, disabled='', env=None):
        """``services``: ENABLED_SERVICES, None for stackrc's default."""
        self.root = pathlib.Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.calls_dir = self.root / 'calls'
        self.env = dict(os.environ)
        self.env.update({
            'IOTHROTTLE_TEST_DEVSTACK': str(devstack_dir()),
            'IOTHROTTLE_TEST_REPO': str(REPO),
            'IOTHROTTLE_TEST_SANDBOX': str(self.root),
            'IOTHROTTLE_TEST_CALLS': str(self.calls_dir),
            'IOTHROTTLE_TEST_DISABLED': disabled,
            'SERVICE_HOST': SERVICE_HOST,
        })
        self.env.pop('ENABLED_SERVICES', None)
        if services is not None:
            self.env['ENABLED_SERVICES'] = services
        self.env.update(env or {})
        self.conf_dir = self.root / 'etc' / 'iothrottle'

    def run(self, mode):
        """Run stack, unstack or clean; the finished process."""
        return subprocess.run(
            ['bash', str(RUNNER), mode], env=self.env, cwd=str(self.root),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=RUN_TIMEOUT_S)

    def run_ok(self, mode):
        done = self.run(mode)
        if done.returncode != 0:
            raise AssertionError('devstack %s failed (%d):\n%s' % (
                mode, done.returncode, done.stdout[-4000:]))
        return done

    def calls(self, command):
        """Each recorded call of ``command``: its arguments."""
        path = self.calls_dir / ('%s.log' % command)
        if not path.exists():
            return []
        calls = []
        for line in path.read_text().splitlines():
            try:
                calls.append(shlex.split(line))
            except ValueError:      # sed scripts in $'...' quoting
                calls.append([line])
        return calls

    def ini(self, *parts):
        return read_ini(self.root.joinpath(*parts))

    def unit(self, service):
        return self.ini('systemd', 'devstack@%s.service' % service)

    def has_unit(self, service):
        return (self.root / 'systemd'
                / ('devstack@%s.service' % service)).exists()


def openstack_calls(sandbox, *words):
    """The recorded openstack calls that contain ``words`` in order."""
    found = []
    for argv in sandbox.calls('openstack'):
        text = ' %s ' % ' '.join(argv)
        if ' %s ' % ' '.join(words) in text:
            found.append(argv)
    return found


def property_specs(sandbox):
    """``{flavor: {extra spec: value}}`` set by ``openstack flavor set``."""
    flavors = {}
    for argv in openstack_calls(sandbox, 'flavor', 'set'):
        specs = flavors.setdefault(argv[-1], {})
        for index, word in enumerate(argv):
            if word == '--property':
                key, _sep, value = argv[index + 1].partition('=')
                specs[key] = value
    return flavors


class TestAllInOne(testtools.TestCase):
    """One node with every service: stack, then unstack, then clean."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = fixtures.TempDir()
        cls.tmp.setUp()
        root = pathlib.Path(cls.tmp.path)
        cls.node = root / 'node'
        sandbox = Sandbox(cls.node, ALL_IN_ONE)
        # nova.conf as the operator left it: Nova's own CPU monitor.
        (root / 'node' / 'etc' / 'nova').mkdir(parents=True)
        (root / 'node' / 'etc' / 'nova' / 'nova.conf').write_text(
            '[DEFAULT]\ncompute_monitors = cpu.virt_driver\n')
        cls.stack_output = sandbox.run_ok('stack').stdout
        # What stack left, before unstack and clean change it.
        shutil.copytree(root / 'node', root / 'stacked', symlinks=True)
        cls.stacked = Sandbox(root / 'stacked', ALL_IN_ONE)
        sandbox.run_ok('unstack')
        shutil.copytree(root / 'node', root / 'unstacked', symlinks=True)
        cls.unstacked = Sandbox(root / 'unstacked', ALL_IN_ONE)
        sandbox.run_ok('clean')
        cls.cleaned = sandbox

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanUp()
        super().tearDownClass()

    def conf(self):
        return self.stacked.ini('etc', 'iothrottle', 'iothrottle.conf')

    def node_path(self, *parts):
        """A path as the node's scripts wrote it (before the copy)."""
        return str(self.node.joinpath(*parts))

    def test_installs_the_repository_beside_nova_and_cinder(self):
        # pip of devstack's global virtualenv, editable, once.
        installs = [argv for argv in self.stacked.calls('pip')
                    if argv[0] == 'install']
        self.assertEqual(1, len(installs))
        self.assertEqual(['-e', str(REPO)], installs[0][-2:])

    def test_message_bus_is_devstacks_rabbitmq(self):
        self.assertEqual(RABBIT_URL,
                         self.conf()['DEFAULT']['transport_url'])

    def test_database_is_recreated_then_migrated(self):
        self.assertEqual(
            [['-uroot', '-pdatabase-secret', '-h127.0.0.1', '-e',
              'DROP DATABASE IF EXISTS iothrottle;'],
             ['-uroot', '-pdatabase-secret', '-h127.0.0.1', '-e',
              'CREATE DATABASE iothrottle CHARACTER SET utf8;']],
            self.stacked.calls('mysql'))
        connection = self.conf()['database']['connection']
        self.assertTrue(connection.startswith(
            'mysql+pymysql://root:database-secret@127.0.0.1/iothrottle?'),
            connection)
        manage_calls = self.stacked.calls('iothrottle-manage')
        self.assertEqual(
            ['--config-file',
             self.node_path('etc', 'iothrottle', 'iothrottle.conf'),
             'db', 'sync'], manage_calls[0])
        # Nothing else touches the database before the schema exists.
        self.assertEqual(1, [argv[2:4] for argv in manage_calls].count(
            ['db', 'sync']))

    def test_every_option_written_exists(self):
        # The file as the conductor reads it: every option the plugin set
        # is one iothrottle (or oslo.log, oslo.messaging, keystoneauth1)
        # registers, and its value parses.
        path = str(self.stacked.conf_dir / 'iothrottle.conf')
        conf = conductor_cmd.build_conf(['--config-file', path])
        rpc_api.register_opts(conf)
        ks_loading.load_auth_from_conf_options(conf, 'nova')
        ks_loading.load_auth_from_conf_options(conf, 'cinder')
        self.assertEqual('password', conf.nova.auth_type)
        self.assertEqual('iothrottle', conf.nova.username)
        self.assertEqual('public', conf.nova.interface)
        self.assertEqual('RegionOne', conf.nova.region_name)
        parsed = self.conf()
        for section in parsed.sections():
            if section == 'keystone_authtoken':
                continue    # keystonemiddleware's, read by iothrottle-api
            for key in parsed[section]:
                if key in parsed.defaults():
                    continue
                self.assertIn(key, conf[section], '[%s] %s' % (section, key))
                conf[section][key]      # parses
        for key in parsed.defaults():
            self.assertIn(key, conf, '[DEFAULT] %s' % key)
            conf[key]

    def test_nova_compute_runs_the_agent_as_its_cpu_monitor(self):
        # devstack's start_nova_compute copies nova.conf to nova-cpu.conf:
        # the operator's cpu.virt_driver is replaced (one cpu. monitor).
        for name in ('nova.conf', 'nova-cpu.conf'):
            self.assertEqual(
                'cpu.iothrottle',
                self.stacked.ini('etc', 'nova', name)['DEFAULT'][
                    'compute_monitors'], name)
        self.assertIn('iothrottle',
                      setup_cfg_entry_points('nova.compute.monitors.cpu'))
        # ... so no agent process of its own.
        self.assertFalse(self.stacked.has_unit('iothrottle-compute'))
        # and nova-compute's unit keeps devstack's PATH (rootwrap).
        self.assertIn('PATH=', self.stacked.unit('n-cpu')['Service'][
            'Environment'])

    def test_cinder_scheduler_gets_filter_and_weigher(self):
        cinder = self.stacked.ini('etc', 'cinder', 'cinder.conf')
        self.assertEqual(
            'AvailabilityZoneFilter,CapacityFilter,CapabilitiesFilter,'
            'SeekModelFilter',
            cinder['DEFAULT']['scheduler_default_filters'])
        self.assertEqual('CapacityWeigher,SeekModelWeigher',
                         cinder['DEFAULT']['scheduler_default_weighers'])
        self.assertIn('SeekModelFilter',
                      setup_cfg_entry_points('cinder.scheduler.filters'))
        self.assertIn('SeekModelWeigher',
                      setup_cfg_entry_points('cinder.scheduler.weights'))
        self.assertEqual(
            self.conf()['DEFAULT']['transport_url'],
            cinder['iothrottle_cinder']['transport_url'])

    def test_conductor_follows_cinders_volumes(self):
        cinder = self.stacked.ini('etc', 'cinder', 'cinder.conf')
        self.assertEqual('messagingv2',
                         cinder['oslo_messaging_notifications']['driver'])
        conf = self.conf()
        self.assertEqual('True', conf['cinder']['listen_notifications'])
        self.assertEqual('iothrottle', conf['cinder']['username'])
        self.assertEqual('password', conf['cinder']['auth_type'])

    def test_conductor_unit(self):
        unit = self.stacked.unit('iothrottle-conductor')
        self.assertEqual(
            '%s --config-file %s' % (
                self.node_path('venv', 'bin', 'iothrottle-conductor'),
                self.node_path('etc', 'iothrottle', 'iothrottle.conf')),
            unit['Service']['ExecStart'])
        systemctl = self.stacked.calls('systemctl')
        for action in ('enable', 'start'):
            self.assertIn([action, 'devstack@iothrottle-conductor.service'],
                          systemctl)

    def test_api_under_uwsgi_behind_apache(self):
        settings = read_ini_settings()
        unit = self.stacked.unit('iothrottle-api')
        exec_start = unit['Service']['ExecStart'].split()
        self.assertEqual('uwsgi', os.path.basename(exec_start[0]))
        uwsgi_ini = exec_start[exec_start.index('--ini') + 1]
        self.assertEqual('iothrottle-api-uwsgi.ini',
                         os.path.basename(uwsgi_ini))
        uwsgi = self.stacked.ini('etc', 'iothrottle',
                                 'iothrottle-api-uwsgi.ini')['uwsgi']
        self.assertEqual(settings['IOTHROTTLE_API_WSGI'], uwsgi['module'])
        self.assertEqual(
            '%s=%s' % (settings['IOTHROTTLE_API_CONFIG_ENV'],
                       uwsgi_ini.replace('iothrottle-api-uwsgi.ini',
                                         'iothrottle.conf')),
            uwsgi['env'])
        site = (self.stacked.root / 'outside' / 'etc' / 'apache2'
                / 'sites-available' / 'iothrottle-api.conf').read_text()
        self.assertIn('ProxyPass "%s" "unix:%s|' % (
            settings['IOTHROTTLE_API_URL_PATH'], uwsgi['socket']), site)
        self.assertIn('www_authenticate_uri',
                      self.conf()['keystone_authtoken'])

    def test_catalog_entry(self):
        settings = read_ini_settings()
        service_type = settings['IOTHROTTLE_API_SERVICE_TYPE']
        created = openstack_calls(self.stacked, 'service', 'create')
        self.assertEqual(1, len(created))
        self.assertEqual(
            service_type, created[0][created[0].index('create') + 1])
        self.assertIn('--name', created[0])
        endpoints = openstack_calls(self.stacked, 'endpoint', 'create')
        self.assertEqual(
            [[service_type, 'public', 'http://%s%s' % (
                SERVICE_HOST, settings['IOTHROTTLE_API_URL_PATH']),
              '--region', 'RegionOne']],
            [argv[argv.index('create') + 1:argv.index('-f')]
             for argv in endpoints])
        # The service user, admin in project service (the conductor
        # lists every project's servers).
        self.assertTrue(openstack_calls(self.stacked, 'user', 'create',
                                        'iothrottle'))
        self.assertTrue(openstack_calls(
            self.stacked, 'role', 'add', 'admin', '--user', 'iothrottle',
            '--project', 'service'))

    def test_seeded_tiers_and_flavors_are_valid(self):
        # Replays the recorded tier commands on a real SQLite database
        # and checks every flavor's extra specs against those tiers.
        tmp = self.useFixture(fixtures.TempDir()).path
        conf_file = os.path.join(tmp, 'iothrottle.conf')
        with open(conf_file, 'w') as stream:
            stream.write('[database]\nconnection = sqlite:///%s/db.sqlite\n'
                         % tmp)
        calls = self.stacked.calls('iothrottle-manage')
        creates = [argv[2:] for argv in calls if argv[2:4] == ['tier',
                                                               'create']]
        self.assertEqual(['bronze', 'silver', 'gold'],
                         [argv[2] for argv in creates])
        for argv in [['db', 'sync']] + creates:
            code, out, err = cli.run_main(
                self, manage.main, ['--config-file', conf_file] + argv)
            self.assertEqual((0, ''), (code, err), argv)
        # The plugin skips a tier that "tier list" shows at a line start.
        code, out, _err = cli.run_main(
            self, manage.main, ['--config-file', conf_file, 'tier', 'list'])
        for name in ('bronze', 'silver', 'gold'):
            self.assertRegex(out, '(?m)^%s ' % name)
        engine = db_api.create_engine('sqlite:///%s/db.sqlite' % tmp)
        self.addCleanup(engine.dispose)
        tiers = db_api.list_tiers(engine)
        flavors = property_specs(self.stacked)
        self.assertEqual({'io.bronze', 'io.silver', 'io.gold', 'io.custom'},
                         set(flavors))
        for name, specs in flavors.items():
            for key, value in specs.items():
                extra_specs.check_spec(key, value)      # nova-api's check
            extra_specs.guarantee_from_extra_specs(specs, tiers)
        self.assertEqual(200, extra_specs.guarantee_from_extra_specs(
            flavors['io.gold'], tiers).min_iops)
        # Each flavor created once (none existed).
        self.assertEqual(sorted(flavors), sorted(
            argv[-1] for argv in openstack_calls(self.stacked, 'flavor',
                                                 'create')))

    def test_unstack_stops_what_stack_started(self):
        systemctl = self.unstacked.calls('systemctl')
        after_stack = len(self.stacked.calls('systemctl'))
        for service in ('iothrottle-conductor', 'iothrottle-api'):
            unit = 'devstack@%s.service' % service
            self.assertIn(['stop', unit], systemctl[after_stack:])
            self.assertIn(['disable', unit], systemctl[after_stack:])
        # Nova's own unit is unstack.sh's business, not the plugin's.
        self.assertNotIn(['stop', 'devstack@n-cpu.service'], systemctl)

    def test_clean_removes_configuration_and_api_site(self):
        self.assertTrue(self.unstacked.conf_dir.exists())
        self.assertFalse(self.cleaned.conf_dir.exists())
        sudo = self.cleaned.calls('sudo')
        self.assertIn(['rm', '-f', '/etc/apache2/sites-available/'
                       'iothrottle-api.conf'], sudo)
        self.assertIn(['a2dissite', 'iothrottle-api'], sudo)


def read_ini_settings():
    """The API names of devstack/settings, as bash sees them."""
    names = ('IOTHROTTLE_API_WSGI', 'IOTHROTTLE_API_CONFIG_ENV',
             'IOTHROTTLE_API_SERVICE_TYPE', 'IOTHROTTLE_API_URL_PATH')
    script = ('function enable_service { :; }; '
              'function get_python_exec_prefix { :; }; '
              'function trueorfalse { echo $1; }; '
              'source "$1"; ' + ' '.join(
                  'echo "%s=${%s}";' % (name, name) for name in names))
    done = subprocess.run(
        ['bash', '-c', script, 'bash', str(REPO / 'devstack' / 'settings')],
        stdout=subprocess.PIPE, text=True, check=True)
    return dict(line.split('=', 1) for line in done.stdout.splitlines())


class TestComputeNode(testtools.TestCase):
    """A subnode with nova-compute and cinder-scheduler: the agent as a
    process of its own, no conductor, API or database here."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = fixtures.TempDir()
        cls.tmp.setUp()
        root = pathlib.Path(cls.tmp.path) / 'node'
        # local.conf of a compute subnode as devstack's multinode guide
        # has it: RabbitMQ and MySQL on the controller (SERVICE_HOST).
        cls.sandbox = Sandbox(
            root, 'n-cpu,c-sch,placement-client',
            disabled='iothrottle-conductor iothrottle-api',
            env={'IOTHROTTLE_AGENT_MODE': 'process',
                 'HOST_IP': '192.0.2.12', 'DATABASE_TYPE': 'mysql',
                 'MYSQL_HOST': SERVICE_HOST, 'RABBIT_HOST': SERVICE_HOST})
        (root / 'etc' / 'cinder').mkdir(parents=True)
        (root / 'etc' / 'cinder' / 'cinder.conf').write_text(
            '[DEFAULT]\nscheduler_default_filters = '
            'CapacityFilter,SeekModelFilter\n'
            'scheduler_default_weighers = GoodnessWeigher\n')
        cls.sandbox.run_ok('stack')

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanUp()
        super().tearDownClass()

    def test_agent_is_a_service_in_libvirts_group(self):
        unit = self.sandbox.unit('iothrottle-compute')
        exec_start = unit['Service']['ExecStart'].split()
        self.assertEqual('iothrottle-compute',
                         os.path.basename(exec_start[0]))
        self.assertEqual(['--config-file', str(self.sandbox.conf_dir
                                               / 'iothrottle.conf')],
                         exec_start[1:])
        self.assertEqual('libvirt', unit['Service']['Group'])
        self.assertNotIn(
            'compute_monitors',
            self.sandbox.ini('etc', 'nova', 'nova-cpu.conf')['DEFAULT'])

    def test_no_conductor_api_or_database_here(self):
        self.assertFalse(self.sandbox.has_unit('iothrottle-conductor'))
        self.assertFalse(self.sandbox.has_unit('iothrottle-api'))
        self.assertEqual([], self.sandbox.calls('mysql'))
        self.assertEqual([], self.sandbox.calls('iothrottle-manage'))
        self.assertEqual([], self.sandbox.calls('openstack'))
        conf = read_ini(self.sandbox.conf_dir / 'iothrottle.conf')
        self.assertFalse(conf.has_section('database'))
        self.assertEqual(RABBIT_URL, conf['DEFAULT']['transport_url'])

    def test_cinder_lists_are_extended_once(self):
        cinder = self.sandbox.ini('etc', 'cinder', 'cinder.conf')
        self.assertEqual('CapacityFilter,SeekModelFilter',
                         cinder['DEFAULT']['scheduler_default_filters'])
        self.assertEqual('GoodnessWeigher,SeekModelWeigher',
                         cinder['DEFAULT']['scheduler_default_weighers'])


class TestNodeWithoutNovaCompute(testtools.TestCase):

    def test_no_agent_and_a_warning(self):
        # The conductor's node of a multinode devstack, nova-compute
        # elsewhere: iothrottle-compute (enabled by settings) has nothing
        # to run in.
        root = self.useFixture(fixtures.TempDir()).path
        sandbox = Sandbox(os.path.join(root, 'node'),
                          'key,mysql,rabbit,n-api,n-cond,n-sch')
        done = sandbox.run_ok('stack')
        warnings = [line for line in done.stdout.splitlines()
                    if line.startswith('[WARNING]')]
        self.assertEqual(1, len(warnings), warnings)
        self.assertTrue(warnings[0].endswith(
            ' iothrottle-compute: no n-cpu on this node, so no agent '
            'inside nova-compute'), warnings)
        self.assertNotIn('compute_monitors', sandbox.ini(
            'etc', 'nova', 'nova.conf')['DEFAULT'])
        self.assertFalse(sandbox.has_unit('iothrottle-compute'))
        self.assertTrue(sandbox.has_unit('iothrottle-conductor'))
