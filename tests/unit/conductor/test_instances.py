"""Nova's record of instances: who may report a disk, and its guarantee.

Nova cannot run here: a fake shaped like python-novaclient's Client
(``servers.list``/``servers.get`` returning servers with ``id``, the
embedded ``flavor`` dict with ``extra_specs`` and the admin attribute
``OS-EXT-SRV-ATTR:host``) stands in for it.
"""

import dataclasses
import logging
import threading
import types

import fixtures
from oslo_config import cfg
import testtools

from iothrottle.rpc import threads

threads.setup()

import futurist  # noqa: E402

from iothrottle.conductor import core  # noqa: E402
from iothrottle.conductor import instances  # noqa: E402
from iothrottle import conf as iothrottle_conf  # noqa: E402
from iothrottle.controller import model  # noqa: E402
from iothrottle.db import api  # noqa: E402
from iothrottle.rpc import wire  # noqa: E402
from tests.unit.conductor import test_core  # noqa: E402
from tests.unit.db import base as db_base  # noqa: E402

GOLD = model.Guarantee(min_iops=30.0, tier='gold')
GOLD_SPECS = {'iothrottle:tier': 'gold', 'iothrottle:min_iops': '40',
              'hw:cpu_policy': 'shared'}
REFRESH_S = 60.0
RETRY_S = 15.0


class FakeServer:
    """What novaclient gives for a server at microversion >= 2.47."""

    def __init__(self, uuid, host, specs, flavor_name='m1.gold',
                 project_id='proj-a'):
        self.id = uuid
        self.tenant_id = project_id
        self.flavor = {'original_name': flavor_name, 'vcpus': 1,
                       'ram': 512, 'disk': 1, 'extra_specs': dict(specs)}
        setattr(self, instances.HOST_ATTR, host)


class FakeService:
    def __init__(self, host):
        self.host = host
        self.binary = 'nova-compute'


class FakeNova:
    """``servers.list``/``get`` over a dict, ``services.list`` of the
    compute hosts; ``down`` raises, ``gate`` (an Event) holds every
    request until set.  No ``flavors``: a lookup by flavor name cannot
    succeed."""

    def __init__(self, *servers, hosts=('cmp-0', 'cmp-1', 'cmp-2',
                                        'cmp-9')):
        self.servers = self
        self.services = types.SimpleNamespace(list=self.list_services)
        self.by_uuid = {s.id: s for s in servers}
        self.hosts = list(hosts)
        self.down = False
        self.gate = None
        self.listed = []
        self.services_listed = 0

    def _request(self):
        if self.gate is not None:
            self.gate.wait()
        if self.down:
            raise ConnectionError('Unable to establish connection to nova')

    def list(self, detailed=True, search_opts=None):
        self._request()
        host = search_opts['host']
        self.listed.append(host)
        assert search_opts['all_tenants'] is True
        return [s for s in self.by_uuid.values()
                if getattr(s, instances.HOST_ATTR) == host]

    def get(self, uuid):
        self._request()
        return self.by_uuid[uuid]

    def list_services(self, binary=None):
        self._request()
        self.services_listed += 1
        return [FakeService(host) for host in self.hosts]

    def migrate(self, uuid, host):
        setattr(self.by_uuid[uuid], instances.HOST_ATTR, host)


def sample(uuid, flavor='m1.tiny', iops=10.0):
    return test_core.sample(uuid, 'ceph', iops=iops, flavor=flavor)


class DirectoryTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.now = 1000.0
        self.engine = self.useFixture(db_base.SyncedDatabase()).engine
        api.create_tier(self.engine, GOLD)
        self.nova = FakeNova(
            FakeServer('vm1', 'cmp-1', GOLD_SPECS),
            FakeServer('vm2', 'cmp-2', {}),
            FakeServer('vm3', 'cmp-2', {'iothrottle:min_iops': 'lots'}))

    def directory(self, executor=None):
        return instances.Directory(
            self.nova, self.engine, refresh_s=REFRESH_S, retry_s=RETRY_S,
            executor=executor or futurist.SynchronousExecutor(),
            clock=lambda: self.now)

    def core(self, directory, policy=None):
        self.policy = policy or test_core.Recorder()
        return core.Core(self.policy, None,
                         core.Capacities(test_core.CAPACITY),
                         interval_s=2.0, instances=directory)

    def round(self, the_core, *reports):
        for report in reports:
            the_core.add_report(report, self.now)
        return the_core.decide(self.now)

    def seen(self):
        """{disk_id: guarantee} of the last view the policy saw."""
        return {d.sample.disk_id: d.guarantee
                for d in self.policy.views[-1].disks}


class TestOwnership(DirectoryTestCase):

    def test_a_host_reporting_another_hosts_instance_is_ignored(self):
        the_core = self.core(self.directory())
        spoof = sample('vm1', iops=90.0)
        round_ = self.round(
            the_core, test_core.report('cmp-2', spoof, sample('vm2')),
            test_core.report('cmp-1', sample('vm1')))
        self.assertEqual({'vm1/vda', 'vm2/vda'}, set(self.seen()))
        self.assertEqual(10.0, self.policy.views[-1].disks[0].sample.iops)
        self.assertEqual(['vm1/vda reported by cmp-2 ignored: Nova places '
                          'instance vm1 on cmp-1'], list(round_.errors))
        self.assertEqual({'vm1/vda': 'cmp-1', 'vm2/vda': 'cmp-2'},
                         the_core.owners)

    def test_the_warning_is_rate_limited(self):
        the_core = self.core(self.directory())
        counts = []
        for step_s in (0.0, 2.0, core.WARN_EVERY_S):
            self.now += step_s
            round_ = self.round(the_core, test_core.report(
                'cmp-2', sample('vm1'), sample('vm2')))
            counts.append(len(round_.errors))
        self.assertEqual([1, 0, 1], counts)

    def test_an_unknown_instance_is_left_out_of_the_domain(self):
        the_core = self.core(self.directory())
        rounds = [self.round(the_core, test_core.report(
            'cmp-2', sample('ghost', iops=1e6), sample('vm2')))
            for _ in range(core.PEAK_HELD_INTERVALS)]
        self.assertEqual({'vm2/vda'}, set(self.seen()))
        self.assertEqual(10.0, the_core.capacities.peaks['ceph'][0])
        self.assertIn('instance ghost on no host known yet',
                      rounds[0].errors[0])

    def test_a_live_migration_is_owned_by_the_source_until_nova_flips(self):
        # Destination "cmp-0" sorts before the source: the old rule
        # (first host name wins) took the destination's report.
        self.nova.migrate('vm1', 'cmp-9')
        the_core = self.core(self.directory())
        self.round(the_core,
                   test_core.report('cmp-0', sample('vm1', iops=1.0)),
                   test_core.report('cmp-9', sample('vm1', iops=20.0)))
        self.assertEqual(20.0, self.policy.views[-1].disks[0].sample.iops)
        self.assertEqual({'vm1/vda': 'cmp-9'}, the_core.owners)

        self.nova.migrate('vm1', 'cmp-0')    # post-live-migration
        self.now += RETRY_S                  # the negative cache expires
        self.round(the_core,
                   test_core.report('cmp-0', sample('vm1', iops=1.0)),
                   test_core.report('cmp-9', sample('vm1', iops=20.0)))
        self.assertEqual({'vm1/vda': 'cmp-0'}, the_core.owners)
        self.assertEqual(1.0, self.policy.views[-1].disks[0].sample.iops)
        self.assertEqual(40.0, self.seen()['vm1/vda'].min_iops)


class TestGuarantees(DirectoryTestCase):

    def test_from_the_embedded_extra_specs_not_the_reported_name(self):
        the_core = self.core(self.directory())
        self.round(the_core, test_core.report(
            'cmp-1', sample('vm1', flavor='m1.tiny')))
        g = self.seen()['vm1/vda']
        self.assertEqual((40.0, 'gold'), (g.min_iops, g.tier))

    def test_a_flavor_deleted_in_nova_keeps_its_instances_guarantee(self):
        # The fake has no flavors API at all: a name lookup would fail.
        self.assertFalse(hasattr(self.nova, 'flavors'))
        self.nova.by_uuid['vm1'].flavor['original_name'] = 'm1.deleted'
        the_core = self.core(self.directory())
        self.round(the_core, test_core.report(
            'cmp-1', sample('vm1', flavor='m1.deleted')))
        self.assertEqual(40.0, self.seen()['vm1/vda'].min_iops)

    def test_invalid_extra_specs_give_no_guarantee_and_one_warning(self):
        the_core = self.core(self.directory())
        for _ in range(3):
            self.now += REFRESH_S     # listed again every round
            self.round(the_core, test_core.report('cmp-2', sample('vm3')))
            self.assertEqual(model.NO_GUARANTEE, self.seen()['vm3/vda'])
        self.assertEqual(3, len(self.nova.listed))
        self.assertEqual(1, self.log.output.count('instance vm3: '
                                                  'iothrottle:min_iops'))

    def test_extra_specs_that_are_not_a_mapping(self):
        self.nova.by_uuid['vm2'].flavor['extra_specs'] = ['x']
        directory = self.directory()
        directory.verify('cmp-2', 'vm2')
        self.assertEqual((instances.VERIFIED, model.NO_GUARANTEE),
                         self._verdict(directory, 'cmp-2', 'vm2'))
        self.assertIn('extra_specs is a list', self.log.output)

    def _verdict(self, directory, host, uuid):
        verdict, placement = directory.verify(host, uuid)
        return verdict, placement.guarantee


class TestRefresh(DirectoryTestCase):

    def test_nova_down_keeps_the_last_known_answer(self):
        directory = self.directory()
        self.assertEqual(instances.VERIFIED,
                         directory.verify('cmp-1', 'vm1')[0])
        self.nova.down = True
        for _ in range(3):
            self.now += REFRESH_S
            verdict, placement = directory.verify('cmp-1', 'vm1')
            self.assertEqual((instances.VERIFIED, 40.0),
                             (verdict, placement.guarantee.min_iops))
        self.assertEqual(1, self.log.output.count('keeping the last known'))
        self.assertIn('cannot read the compute hosts from Nova',
                      self.log.output)
        self.nova.down = False
        self.now += REFRESH_S
        directory.verify('cmp-1', 'vm1')
        self.assertIn('Nova answers again', self.log.output)

    def test_a_host_is_listed_once_per_refresh_or_retry_period(self):
        directory = self.directory()
        for uuid in ('vm1', 'spoof-a', 'spoof-b', 'vm1'):
            directory.verify('cmp-1', uuid)
        self.assertEqual(['cmp-1'], self.nova.listed)
        self.now += RETRY_S
        directory.verify('cmp-1', 'vm1')        # verified: not yet due
        self.assertEqual(['cmp-1'], self.nova.listed)
        directory.verify('cmp-1', 'spoof-a')    # unverified: retried
        self.assertEqual(['cmp-1', 'cmp-1'], self.nova.listed)

    def test_an_invented_host_name_costs_nova_no_listing(self):
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        for host in ('fake-1', 'fake-2', 'fake-3'):
            verdict, placement = directory.verify(host, 'vm1')
            self.assertEqual((instances.ELSEWHERE, 'cmp-1'),
                             (verdict, placement.host))
        self.assertEqual(['cmp-1'], self.nova.listed)
        self.assertEqual(1, self.nova.services_listed)
        self.now += RETRY_S           # a host added to Nova since?
        directory.verify('fake-4', 'vm1')
        self.assertEqual(2, self.nova.services_listed)
        self.assertEqual(['cmp-1'], self.nova.listed)

    def test_a_new_compute_host_is_listed_once_nova_knows_it(self):
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        self.nova.hosts.append('cmp-new')
        self.nova.by_uuid['vm4'] = FakeServer('vm4', 'cmp-new', GOLD_SPECS)
        self.now += RETRY_S
        self.assertEqual(instances.VERIFIED,
                         directory.verify('cmp-new', 'vm4')[0])

    def test_credentials_without_the_host_attribute_are_named(self):
        delattr(self.nova.by_uuid['vm1'], instances.HOST_ATTR)
        self.nova.list = lambda detailed, search_opts: [
            self.nova.by_uuid['vm1']]
        directory = self.directory()
        self.assertEqual(instances.UNKNOWN,
                         directory.verify('cmp-1', 'vm1')[0])
        self.assertIn('need the admin role', self.log.output)

    def test_an_instance_gone_from_its_host_is_forgotten(self):
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        del self.nova.by_uuid['vm1']
        self.now += REFRESH_S
        directory.verify('cmp-1', 'vm1')
        self.assertEqual((instances.UNKNOWN, None),
                         directory.verify('cmp-1', 'vm1'))

    def test_an_instance_seen_on_two_hosts_then_gone(self):
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        self.nova.migrate('vm1', 'cmp-2')
        directory.verify('cmp-2', 'vm1')          # cmp-2 claims it now
        del self.nova.by_uuid['vm1']
        self.now += REFRESH_S
        directory.verify('cmp-2', 'vm2')          # cmp-2 forgets it
        directory.verify('cmp-1', 'vm1')          # and so does cmp-1
        self.assertEqual((instances.UNKNOWN, None),
                         directory.verify('cmp-1', 'vm1'))
        self.assertEqual(['cmp-1', 'cmp-2', 'cmp-2', 'cmp-1'],
                         self.nova.listed)
        self.assertNotIn('cannot read', self.log.output)

    def test_a_hung_nova_never_blocks_a_decision_round(self):
        self.nova.gate = threading.Event()
        executor = futurist.ThreadPoolExecutor(max_workers=2)
        self.addCleanup(self.nova.gate.set)
        directory = self.directory(executor)
        the_core = self.core(directory)
        for report in (test_core.report('cmp-1', sample('vm1')),
                       test_core.report('cmp-2', sample('vm2'))):
            the_core.add_report(report, self.now)
        done = threading.Event()
        rounds = []
        worker = threading.Thread(
            target=lambda: (rounds.append(the_core.decide(self.now)),
                            done.set()), daemon=True)
        worker.start()
        # Nova holds every request: the round must still come back.
        self.assertTrue(done.wait(30), 'Core.decide waited for Nova')
        self.assertEqual({}, rounds[0].by_host)   # nothing verified yet
        self.nova.gate.set()
        executor.shutdown(wait=True)              # the listings are done
        directory.executor = futurist.SynchronousExecutor()
        self.now += 2.0
        round_ = self.round(the_core, test_core.report('cmp-1',
                                                       sample('vm1')))
        self.assertEqual(['cmp-1'], list(round_.by_host))


class TestOwners(DirectoryTestCase):
    """Each listing records who owns the instances and their tier."""

    def test_listing_records_project_and_tier(self):
        self.nova.by_uuid['vm2'].tenant_id = 'proj-b'
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        directory.verify('cmp-2', 'vm2')
        self.assertEqual(('proj-a', 'gold'), (
            api.get_instance(self.engine, 'vm1').project_id,
            api.get_instance(self.engine, 'vm1').tier))
        self.assertEqual(('proj-b', ''), (
            api.get_instance(self.engine, 'vm2').project_id,
            api.get_instance(self.engine, 'vm2').tier))
        # The tier is now in use: the operator cannot delete it.
        self.assertRaises(api.InUse, api.delete_tier, self.engine, 'gold')

    def test_unchanged_records_are_written_again_only_when_old(self):
        directory = self.directory()
        directory.verify('cmp-1', 'vm1')
        first = api.get_instance(self.engine, 'vm1').seen_at
        self.now += REFRESH_S
        directory.verify('cmp-1', 'vm1')
        self.assertEqual(first, api.get_instance(self.engine,
                                                 'vm1').seen_at)
        self.nova.by_uuid['vm1'].tenant_id = 'proj-c'
        self.now += REFRESH_S
        directory.verify('cmp-1', 'vm1')
        self.assertEqual('proj-c', api.get_instance(self.engine,
                                                    'vm1').project_id)
        changed = api.get_instance(self.engine, 'vm1').seen_at
        self.now += instances.RECORD_EVERY_S
        directory.verify('cmp-1', 'vm1')
        self.assertGreater(api.get_instance(self.engine, 'vm1').seen_at,
                           changed)

    def test_a_failed_write_is_logged_once_and_retried(self):
        directory = self.directory()
        broken = self.useFixture(fixtures.MockPatchObject(
            api, 'record_instances', side_effect=RuntimeError('db gone')))
        directory.verify('cmp-1', 'vm1')
        self.now += REFRESH_S
        directory.verify('cmp-1', 'vm1')
        self.assertEqual(2, broken.mock.call_count)
        self.assertEqual(1, self.log.output.count(
            'cannot record the projects'))


class TestConfig(testtools.TestCase):

    def test_microversions(self):
        instances.check_api_version('2.47')
        instances.check_api_version('2.100')
        exc = self.assertRaises(ValueError, instances.check_api_version,
                                '2.46')
        self.assertIn('below 2.47', str(exc))
        exc = self.assertRaises(ValueError, instances.check_api_version,
                                'latest')
        self.assertIn("'latest' is not a microversion", str(exc))

    def test_nova_requests_time_out_by_default(self):
        conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(conf)
        conf([])
        self.assertEqual(10.0, conf.nova.timeout)
        self.assertGreaterEqual(conf.nova.api_version, '2.47')


class TestTrustingModes(testtools.TestCase):
    """Without a directory (file and db modes) nothing changes."""

    def test_every_host_is_trusted_and_the_flavor_name_resolved(self):
        policy = test_core.Recorder()
        the_core = test_core.make_core(policy)
        the_core.add_report(test_core.report(
            'cmp-2', test_core.sample('vm1', 'ceph')), 0.0)
        the_core.decide(0.0)
        self.assertEqual([test_core.GOLD],
                         [d.guarantee for d in policy.views[-1].disks])

    def test_report_round_trip_is_unchanged(self):
        report = wire.report('cmp-1', 2.0, [sample('vm1')], {})
        self.assertEqual('cmp-1', wire.decode_report(report).host)


class TestBuild(testtools.TestCase):
    """What ``iothrottle-conductor`` builds for each guarantees mode."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.tmp = self.useFixture(fixtures.TempDir())
        self.conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(self.conf)
        self.conf([])

    def test_file_mode_trusts_hosts_and_says_so(self):
        from iothrottle.cmd import conductor as cmd_conductor
        tiers = self.tmp.join('tiers.yaml')
        with open(tiers, 'w') as f:
            f.write('tiers: {gold: {min_iops: 10}}\n'
                    'flavors: {m1.gold: gold}\n')
        self.conf.set_override('guarantees', 'file', 'conductor')
        self.conf.set_override('tiers_file', tiers, 'conductor')
        resolver, directory = cmd_conductor.build_guarantees(self.conf, None)
        self.assertIsNone(directory)
        self.assertTrue(resolver.covers('m1.gold'))
        self.assertIn('guarantees = file: every compute host is trusted',
                      self.log.output)

    def test_nova_mode_refuses_an_old_microversion(self):
        from iothrottle.cmd import conductor as cmd_conductor
        self.conf.set_override('api_version', '2.46', 'nova')
        exc = self.assertRaises(cmd_conductor.CommandError,
                                cmd_conductor.build_guarantees, self.conf,
                                None)
        self.assertEqual("[nova] api_version: 2.46 is below 2.47, the first "
                         "that gives a server's flavor extra specs",
                         str(exc))


class TestFloorsAndLiftedCaps(DirectoryTestCase):
    """Only the host Nova places an instance on gets its memory floor,
    and only its report ends the instance's recorded cap."""

    def report(self, host, uuid, agent_id):
        return dataclasses.replace(test_core.report(host, sample(uuid)),
                                   agent_id=agent_id, seq=1)

    def test_floors_from_the_instances_own_flavor(self):
        self.nova.by_uuid['vm1'].flavor['extra_specs'][
            'iothrottle:min_memory_mb'] = '256'
        the_core = self.core(self.directory())
        round_ = self.round(the_core, self.report('cmp-1', 'vm1', 'a1'),
                            self.report('cmp-2', 'vm2', 'a2'))
        self.assertEqual({'cmp-1': {'vm1': 256.0}, 'cmp-2': {'vm2': 0.0}},
                         round_.floors)

    def test_a_spoofing_host_gets_no_floor_and_ends_no_cap(self):
        the_core = self.core(self.directory())
        round_ = self.round(the_core, self.report('cmp-1', 'vm1', 'a1'))
        the_core.cast('a1', [d for d, _ in round_.by_host['cmp-1']],
                      100.0, self.now)
        self.now += 2.0
        round_ = self.round(the_core, self.report('cmp-2', 'vm1', 'evil'))
        self.assertEqual((), round_.lifted)
        self.assertEqual({}, round_.floors)
        # Its own host's new agent process does end it.
        self.now += 2.0
        round_ = self.round(the_core, self.report('cmp-1', 'vm1', 'a2'))
        self.assertEqual(('vm1/vda',), round_.lifted)
