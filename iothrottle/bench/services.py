"""The real services under the testbed benches and e2e tests (shell).

RabbitMQ (127.0.0.1:5672, guest/guest), MariaDB (127.0.0.1:3306, root,
no password) and Redis (127.0.0.1:6379, the conductors' tooz backend)
are the machine's own; :func:`ensure_rabbitmq`, :func:`ensure_mariadb`
and :func:`ensure_redis` start them when they do not answer, with a
deadline.  :class:`Services` runs iothrottle's own commands
(``iothrottle-conductor``, ``iothrottle-compute``) as child processes,
each with its log file, and knows when they consume their RabbitMQ
queues, so a caller waits for readiness rather than for a guess of
seconds.
"""

import os
import signal
import socket
import subprocess
import sys
import time

RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
MARIADB_HOST = '127.0.0.1'
MARIADB_PORT = 3306
MARIADB_USER = 'root'
MARIADBD = '/usr/sbin/mariadbd'
REDIS_PORT = 6379
# Several conductors' tooz backend.  A conductor silent for
# membership_timeout seconds leaves the group: 3 s is 1.5 intervals of
# the testbed's 2 s, so a killed owner is replaced within 3 intervals.
REDIS_URL = 'redis://127.0.0.1:%d?membership_timeout=3' % REDIS_PORT
# Seconds Redis may take to answer after redis-server is started.
REDIS_START_S = 30.0
# Seconds RabbitMQ may take to answer after rabbitmq-server -detached
# (Erlang boots the whole node).
RABBIT_START_S = 90.0
# Seconds MariaDB may take to answer after mariadbd is started.
MARIADB_START_S = 60.0
# Seconds a service may take to consume its queue after it starts
# (imports, config, connection to RabbitMQ, a libvirt reconcile).
READY_S = 60.0
# Seconds a service may take to stop after SIGTERM (it lifts its caps).
STOP_S = 30.0
# Pause between two polls of a readiness condition.
POLL_S = 0.1


def wait(predicate, deadline_s, what):
    """Poll ``predicate`` until true; AssertionError after the deadline."""
    deadline = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %gs waiting for %s'
                                 % (deadline_s, what))
        time.sleep(POLL_S)


def answers(port, host='127.0.0.1'):
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def rabbit_answers():
    return answers(5672)


def ensure_rabbitmq():
    """Start RabbitMQ if it does not answer; fail if it will not."""
    if rabbit_answers():
        return
    subprocess.run(['rabbitmq-server', '-detached'], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(rabbit_answers, RABBIT_START_S, 'RabbitMQ to answer after '
         'rabbitmq-server -detached')


def redis_answers():
    return answers(REDIS_PORT)


def ensure_redis():
    """Start Redis if it does not answer; fail if it will not."""
    if redis_answers():
        return
    subprocess.run(['redis-server', '--port', str(REDIS_PORT), '--bind',
                    '127.0.0.1', '--daemonize', 'yes'], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(redis_answers, REDIS_START_S, 'Redis to answer on port %d after '
         'redis-server --daemonize yes' % REDIS_PORT)


def group_members(group, url=REDIS_URL):
    """Member ids (str) of tooz group ``group`` on ``url``, as a
    conductor reads them; an empty set when the group does not exist."""
    from iothrottle.rpc import threads
    threads.setup()   # tooz imports futurist: no eventlet
    from tooz import coordination
    coordinator = coordination.get_coordinator(url, b'iothrottle-observer')
    coordinator.start()
    try:
        return {m.decode() for m in coordinator.get_members(
            group.encode()).get(timeout=5)}
    except coordination.GroupNotCreated:
        return set()
    finally:
        coordinator.stop()


def rabbitmqctl(*args):
    """Run ``rabbitmqctl -q ARGS``; its stdout."""
    return subprocess.run(['rabbitmqctl', '-q'] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, check=False).stdout


def queue_counts(column):
    """``{queue name: count}`` of RabbitMQ's ``list_queues`` column
    ``column`` (``consumers``, ``messages``)."""
    counts = {}
    for line in rabbitmqctl('list_queues', 'name', column).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def consumed_queues():
    """Names of RabbitMQ queues that have at least one consumer."""
    return {name for name, count in queue_counts('consumers').items()
            if count > 0}


def mariadb_connect(database=None):
    import pymysql
    return pymysql.connect(host=MARIADB_HOST, port=MARIADB_PORT,
                           user=MARIADB_USER, database=database,
                           connect_timeout=2, autocommit=True)


def mariadb_answers():
    import pymysql
    try:
        mariadb_connect().close()
        return True
    except pymysql.err.OperationalError:
        return False


def start_mariadb():
    """``start-stop-daemon`` mariadbd, as the machine starts it."""
    # mariadbd runs as the mysql user (my.cnf) and needs its socket
    # directory, which a reboot of a tmpfs /run removes.
    os.makedirs('/run/mysqld', exist_ok=True)
    subprocess.run(['chown', 'mysql:mysql', '/run/mysqld'], check=False)
    subprocess.run(['start-stop-daemon', '--start', '--oknodo',
                    '--background', '--exec', MARIADBD], check=True)


def stop_mariadb():
    """SIGTERM mariadbd and wait (up to 30 s) until it has stopped."""
    subprocess.run(['start-stop-daemon', '--stop', '--retry', '30',
                    '--exec', MARIADBD], check=False,
                   stdout=subprocess.DEVNULL)


def ensure_mariadb():
    """Start MariaDB if it does not answer; fail if it will not."""
    if mariadb_answers():
        return
    start_mariadb()
    wait(mariadb_answers, MARIADB_START_S, 'MariaDB at %s:%d after '
         'start-stop-daemon started %s' % (MARIADB_HOST, MARIADB_PORT,
                                           MARIADBD))


def create_database(name):
    """Create MariaDB database ``name`` (utf8mb4)."""
    with mariadb_connect() as connection:
        with connection.cursor() as cursor:
            cursor.execute('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                           % name)


def drop_database(name):
    with mariadb_connect() as connection:
        with connection.cursor() as cursor:
            cursor.execute('DROP DATABASE IF EXISTS `%s`' % name)


def mariadb_url(database):
    return ('mysql+pymysql://%s@%s:%d/%s?charset=utf8mb4'
            % (MARIADB_USER, MARIADB_HOST, MARIADB_PORT, database))


class Service:
    """One child process running ``python -m module``."""

    def __init__(self, name, module, conf_path, log_path, queue):
        self.name = name
        self.module = module
        self.conf_path = conf_path
        self.log_path = log_path
        self.queue = queue
        self.proc = None
        # Exit codes of earlier processes of this service (killed on
        # purpose, or died).
        self.exits = []

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, '-m', self.module, '--config-file',
             self.conf_path, '--log-file', self.log_path],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        return self.proc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self, signum=signal.SIGKILL):
        """Send ``signum`` and reap the process; its exit code."""
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=STOP_S)
        self.exits.append(code)
        return code

    def log_tail(self, chars=1500):
        """The last ``chars`` characters of the log (None: all of it)."""
        try:
            with open(self.log_path, errors='replace') as f:
                text = f.read()
        except OSError:
            return ''
        return text if chars is None else text[-chars:]


class Services:
    """iothrottle's services as child processes in ``workdir``; every
    service killed at :meth:`close` if still running."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.services = {}

    def write_conf(self, name, body):
        path = os.path.join(self.workdir, '%s.conf' % name)
        with open(path, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = %s\n%s' % (RABBIT_URL, body))
        return path

    def write_control_plane(self, plan, tb, capacity, database_url,
                            extra=''):
        """The conductor's config for a seed-000-like ``plan`` on
        testbed ``tb`` (``guarantee`` policy, the plan's floors in a
        tiers file, ``capacity`` declared for the store's domain) and the
        text every service shares (``extra`` appended to ``[DEFAULT]``);
        returns ``(conductor config path, shared text)``."""
        import yaml
        tiers_path = os.path.join(self.workdir, 'tiers.yaml')
        with open(tiers_path, 'w') as f:
            yaml.safe_dump({'tiers': {}, 'flavors': {
                vm.flavor: {'min_bytes_sec': vm.guarantee_kb_s * 1024}
                for vm in plan.vms}}, f)
        common = ('%s\n[compute]\nlibvirt_uri = %s\n\n[controller]\n'
                  'policy = guarantee\ninterval_s = %s\nlease_s = %s\n\n'
                  '[database]\nconnection = %s\n' % (
                      extra, tb.uri, plan.interval_s, plan.lease_s,
                      database_url))
        conductor = self.write_conf('conductor', common + (
            '\n[conductor]\nguarantees = file\ntiers_file = %s\n\n'
            '[storage]\ndomain_capacity = %s:%.1f/%.0f\n' % (
                tiers_path, tb.domain_key, capacity.max_iops,
                capacity.max_bytes_sec)))
        return conductor, common

    def add(self, name, module, conf_path, queue):
        service = Service(name, module, conf_path,
                          os.path.join(self.workdir, '%s.log' % name), queue)
        self.services[name] = service
        return service

    def conductor(self, conf_path, name='conductor'):
        return self.add(name, 'iothrottle.cmd.conductor', conf_path,
                        'iothrottle-conductor')

    def agent(self, host, conf_path):
        return self.add(host, 'iothrottle.cmd.compute', conf_path,
                        'iothrottle-compute.%s' % host)

    def manage(self, conf_path, *argv):
        subprocess.run([sys.executable, '-m', 'iothrottle.cmd.manage',
                        '--config-file', conf_path] + list(argv),
                       check=True, stdout=subprocess.DEVNULL)

    def start(self, *names):
        """Start ``names`` (default: all) and wait until each consumes
        its queue; AssertionError (with the logs) if one exits or is not
        ready within READY_S."""
        chosen = [self.services[n] for n in names or self.services]
        for service in chosen:
            service.start()
        self.wait_ready(chosen)

    def wait_ready(self, chosen=None):
        chosen = list(self.services.values()) if chosen is None else chosen
        want = {service.queue for service in chosen}
        deadline = time.monotonic() + READY_S
        while not want <= consumed_queues():
            for service in chosen:
                if not service.alive():
                    raise AssertionError('%s exited:\n%s'
                                         % (service.name, self.logs()))
            if time.monotonic() > deadline:
                raise AssertionError('services not consuming their queues '
                                     'after %gs:\n%s' % (READY_S,
                                                         self.logs()))
            time.sleep(POLL_S)

    def dead(self):
        """Names of services whose current process has exited."""
        return sorted(s.name for s in self.services.values()
                      if s.proc is not None and not s.alive())

    def stop(self, *names):
        """SIGTERM ``names`` (default: all) if running; {name: exit
        code} (SIGKILL after STOP_S)."""
        running = [self.services[n] for n in names or self.services
                   if self.services[n].alive()]
        for service in running:
            service.proc.send_signal(signal.SIGTERM)
        codes = {}
        for service in running:
            try:
                codes[service.name] = service.proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                codes[service.name] = service.kill()
        return codes

    def close(self):
        for service in self.services.values():
            if service.alive():
                service.kill()

    def logs(self):
        return '\n'.join('== %s\n%s' % (s.name, s.log_tail())
                         for s in self.services.values())
