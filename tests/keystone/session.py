"""An operator session through the real deployment path, printed for
README.rst: ``tools/test-keystone --session``.

It stands up what ``test_api_keystone`` tests (Keystone 30 on SQLite,
the API under uWSGI behind Apache as ``devstack/plugin.sh`` writes them,
``/iothrottle`` in the catalog, the database seeded as the conductor
would have written it) and runs the commands of :data:`SESSION` with the
real ``openstack`` binary (and ``curl`` for the version document),
printing each as ``$ command   # as user`` and then what it printed,
stdout and stderr, as a terminal shows them.  The ports are free ports
of the run; every other value is what the commands printed.
"""

import importlib.metadata
import os
import shlex
import subprocess
import sys

from tests.keystone import test_api_keystone as deployment

# (user, argv) in order; argv[0] 'openstack' or 'curl'.  {api} is the
# catalog's endpoint.
SESSION = (
    ('admin', ('openstack', 'catalog', 'show', 'iothrottle', '-c', 'type',
               '-c', 'endpoints')),
    ('anyone', ('curl', '-s', '{api}')),
    ('admin', ('openstack', 'iothrottle', 'tier', 'create', 'gold',
               '--min-iops', '100', '--weight', '4')),
    ('admin', ('openstack', 'iothrottle', 'domain', 'set',
               deployment.DOMAIN, '--max-iops', '2000', '--max-bytes-sec',
               '500000000', '-c', 'key', '-c', 'max_iops', '-c',
               'capacity_source', '-c', 'load', '-c', 'saturated', '-c',
               'caps_in_force')),
    ('alice', ('openstack', 'iothrottle', 'server', 'show',
               deployment.UUID_A, '-f', 'yaml', '-c', 'id', '-c',
               'throttled', '-c', 'disks')),
    ('alice', ('openstack', 'iothrottle', 'server', 'show',
               deployment.UUID_B)),
    ('alice', ('openstack', 'iothrottle', 'tier', 'set', 'gold',
               '--min-iops', '1000')),
    ('admin', ('openstack', 'iothrottle', 'tier', 'delete', 'gold')),
    ('admin', ('openstack', 'iothrottle', 'decision', 'list', '-f', 'value',
               '-c', 'instance_uuid', '-c', 'action', '-c', 'cap_iops')),
)


def _first_line(argv):
    return subprocess.run(argv, capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]


def versions():
    """What ran, one line each."""
    keystone = _first_line([
        os.path.join(deployment.VENV, 'bin', 'python'), '-c',
        'import importlib.metadata as m; print(m.version("keystone"))'])
    return [
        'Keystone %s' % keystone,
        'python-openstackclient %s'
        % importlib.metadata.version('python-openstackclient'),
        _first_line([deployment.APACHE, '-v']).replace('Server version: ',
                                                       ''),
        'uWSGI %s' % _first_line([deployment.UWSGI, '--version']),
    ]


def run(cloud, out):
    passwords = {'admin': (deployment.ADMIN_PASSWORD, 'admin'),
                 'alice': ('alice-secret', 'proj-a')}
    for user, argv in SESSION:
        argv = [word.format(api=cloud.api_url) for word in argv]
        out.write('$ %s   # as %s\n' % (shlex.join(argv), user))
        if argv[0] == 'openstack':
            password, project = passwords[user]
            result = cloud.openstack(user, password, project, *argv[1:],
                                     check=False)
        else:
            result = subprocess.run(argv, capture_output=True, text=True,
                                    timeout=30)
        text = result.stdout + result.stderr
        out.write(text if text.endswith('\n') else text + '\n')
        out.write('\n')


def main():
    cloud = deployment.KeystoneAndApi()
    cloud.setUp()
    try:
        sys.stdout.write('# %s\n\n' % '; '.join(versions()))
        run(cloud, sys.stdout)
    finally:
        cloud.cleanUp()


if __name__ == '__main__':
    main()
