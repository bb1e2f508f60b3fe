"""The API in-process for gabbi: a synced SQLite file, [api]
auth_strategy = noauth2 (the token header names the user and project,
X-Roles the roles, as Placement's tests do) and a fake Nova for flavor
lookups.

Personas of the YAML files (headers in each test's defaults):

* admin: ``x-auth-token: admin:admin-proj``, ``x-roles:
  admin,member,reader`` (Keystone expands implied roles; so do we);
* system reader: ``x-auth-token: auditor``, ``x-roles: reader``,
  ``openstack-system-scope: all``;
* member of the owning project: ``alice:proj-a``, ``member,reader``;
* member of another project: ``bob:proj-b``, ``member,reader``.

Compute agents (FakeCompute, the API's compute RPC client): host
``cmp-1`` answers the advice of the testbed's guest with 2 vCPUs,
``cmp-down`` does not answer, ``cmp-old`` is an agent older than compute
RPC 1.2; APIFixturePinned has ``[upgrade_levels] compute`` at 1.1.

Seeded (APIFixture): storage domain ``rbd:ceph/volumes`` with a declared
capacity and a saturated load (0.95 of it, 2 disks, 1 cap); instance
``$ENVIRON['UUID_A']`` of proj-a (tier gold) capped now, with a history
naming its neighbour; ``$ENVIRON['UUID_B']`` of proj-b released; pool
``cinder-1@hdd#a`` with the WD1600JS profile.
"""

import datetime
import os

from gabbi import fixture
from novaclient import exceptions as nova_exceptions
from oslo_config import fixture as config_fixture

from iothrottle.api import config
from iothrottle.api import deploy
from iothrottle.controller import model
from iothrottle.db import api
from iothrottle.seekmodel import profile
from tests.unit.db import base as db_base

PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'iothrottle', 'profiles')
UUID_A = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'
UUID_B = '0b9e2c3a-1d4f-4e5a-8b6c-7d8e9f0a1b2c'
UUID_UNKNOWN = '11111111-2222-4333-8444-555555555555'
DOMAIN = 'rbd:ceph/volumes'
POOL = 'cinder-1@hdd#a'

# The application of the running fixture, for the intercept.
APP = None


class FakeFlavor:
    """A novaclient Flavor of API 2.61+: ``extra_specs`` in the listing
    (``listed_specs=False``: an older API, ``get_keys`` only)."""

    def __init__(self, flavor_id, name, specs, listed_specs=True):
        self.id = flavor_id
        self.name = name
        self._specs = specs
        if listed_specs:
            self.extra_specs = dict(specs)

    def get_keys(self):
        return dict(self._specs)


class FakeNova:
    """``flavors.get`` by id (NotFound otherwise) and ``flavors.list``
    (paged by ``marker`` and ``limit``), as python-novaclient has them.
    Tier ``tin`` is named by a private flavor without instances."""

    FLAVORS = (
        FakeFlavor('f-gold', 'm1.gold', {'iothrottle:tier': 'gold',
                                         'hw:cpu_policy': 'shared'}),
        FakeFlavor('f-bad', 'm1.bad', {'iothrottle:min_iops': 'lots'}),
        FakeFlavor('f-plain', 'm1.plain', {}),
        FakeFlavor('f-tin', 'm1.tin', {'iothrottle:tier': 'tin'},
                   listed_specs=False),
    )

    def __init__(self):
        self.flavors = self

    def get(self, flavor_id):
        if flavor_id == 'nova-down':
            raise ConnectionError('Unable to establish connection')
        for flavor in self.FLAVORS:
            if flavor.id == flavor_id:
                return flavor
        raise nova_exceptions.NotFound(404)

    def list(self, detailed=True, is_public=True, marker=None, limit=None):
        assert is_public is None, 'private flavors must be listed too'
        flavors = list(self.FLAVORS)
        if marker is not None:
            ids = [flavor.id for flavor in flavors]
            flavors = flavors[ids.index(marker) + 1:]
        return flavors[:limit]


class DownNova:
    """A Nova that cannot be reached."""

    def __init__(self):
        self.flavors = self

    def get(self, *args, **kwargs):
        raise ConnectionError('Unable to establish connection')

    list = get


def _decision(uuid, action, iops, reason, lease_s=0.0):
    cap = model.Cap(iops=iops, bytes_sec=0) if action == model.CAP else None
    return model.Decision(uuid, 'vda', action, reason, cap, lease_s=lease_s)


def seed(engine):
    now = datetime.datetime.now(datetime.timezone.utc)
    api.create_tier(engine, model.Guarantee(min_iops=100, weight=4,
                                            tier='gold'))
    api.declare_capacity(engine, DOMAIN, 2000, 5e8)
    api.record_domain_load(engine, DOMAIN, model.DomainLoad(
        iops=1800, bytes_sec=2.5e7, load=0.95, saturated=True, disks=2,
        caps=1, capacity=model.Capacity(1895.0, 4.7e8)),
        measured_at=now - datetime.timedelta(seconds=5))
    api.record_instances(engine, [
        api.InstanceRecord(UUID_A, 'proj-a', tier='gold'),
        api.InstanceRecord(UUID_B, 'proj-b')])
    api.record_decisions(engine, DOMAIN, [
        _decision(UUID_B, model.RELEASE, 0, 'calm')], 'guarantee',
        decided_at=now - datetime.timedelta(seconds=60))
    api.record_decisions(engine, DOMAIN, [
        _decision(UUID_A, model.CAP, 40,
                  'saturated; at or under guarantee and wanting more: '
                  '%s/vda (50 %% of guarantee)' % UUID_B, lease_s=3600)],
        'guarantee', decided_at=now - datetime.timedelta(seconds=5))
    api.set_pool_profile(engine, POOL, profile.load(
        os.path.join(PROFILES, 'wd1600js.json')), 'bfq')


class FakeCompute:
    """What the API uses of :class:`iothrottle.rpc.api.ComputeAPI`."""

    sends_advice = True
    version_cap = '1.2'

    def advise(self, host, timeout_s):
        import oslo_messaging as messaging

        from tests.unit.rpc import test_advise
        if host == 'cmp-down':
            raise messaging.MessagingTimeout('timed out')
        if host == 'cmp-old':
            raise messaging.RemoteError(
                'UnsupportedVersion', 'Endpoint does not support RPC '
                'version 1.2. Attempted method: advise')
        return test_advise.testbed_advisor(host)()


class PinnedCompute(FakeCompute):
    """``[upgrade_levels] compute = 1.1``."""

    sends_advice = False
    version_cap = '1.1'


class APIFixture(fixture.GabbiFixture):
    """A fresh database and application for one YAML file."""

    nova = FakeNova
    compute = FakeCompute

    def start_fixture(self):
        global APP
        self.database = db_base.SyncedDatabase()
        self.database.setUp()
        conf = config.build_conf([], default_config_files=[])
        self.conf_fixture = config_fixture.Config(conf)
        self.conf_fixture.setUp()
        self.conf_fixture.config(group='api', auth_strategy='noauth2')
        self.conf_fixture.config(group='api', max_limit=50)
        self.conf_fixture.config(group='database',
                                 connection=self.database.url)
        seed(self.database.engine)
        for name, value in (('UUID_A', UUID_A), ('UUID_B', UUID_B),
                            ('UUID_UNKNOWN', UUID_UNKNOWN)):
            os.environ[name] = value
        APP = deploy.deploy(conf, self.database.engine, nova=self.nova,
                            compute_api=self.compute)

    def stop_fixture(self):
        global APP
        APP = None
        self.conf_fixture.cleanUp()
        self.database.cleanUp()


class APIFixtureWithoutNova(APIFixture):
    """The API without [nova] credentials."""

    nova = None


class APIFixtureNovaDown(APIFixture):
    """The API with a Nova that does not answer."""

    nova = DownNova


def setup_app():
    """The intercept: the running fixture's application."""
    def application(environ, start_response):
        return APP(environ, start_response)
    return application


class APIFixturePinned(APIFixture):
    """The API with compute RPC pinned below advice."""

    compute = PinnedCompute
