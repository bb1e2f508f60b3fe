"""The balloon loop's shell, with a fake libvirt connection and fake
guest reports."""

import types

import libvirt
from oslo_config import cfg
import testtools

from iothrottle.balloon import cams
from iothrottle.compute import balloon_agent
from iothrottle.compute import collector as collector_mod
from iothrottle.compute import stats
from iothrottle.conf import balloon as balloon_conf
from tests.unit.balloon import test_estimator


class FakeDom:

    def __init__(self, conn, uuid):
        self.conn, self.uuid = conn, uuid

    def setMemoryFlags(self, kib, flags):
        self.conn.sets.append((self.uuid, kib, flags))


class FakeConn:

    def __init__(self):
        self.sets = []

    def lookupByUUIDString(self, uuid):
        return FakeDom(self, uuid)


def conf(**overrides):
    c = cfg.ConfigOpts()
    balloon_conf.register_opts(c)
    c([], project='iothrottle', default_config_files=[])
    for k, v in overrides.items():
        c.set_override(k, v, 'balloon')
    return c


def collection(current_kib, usable_kib=200 * 1024, max_kib=512 * 1024):
    usable = (usable_kib if isinstance(usable_kib, dict)
              else {uuid: usable_kib for uuid in current_kib})
    domains = {uuid: stats.DomainCounters(
        uuid=uuid, name=uuid, balloon=stats.BalloonStats(
            current_kib=cur, maximum_kib=max_kib, usable_kib=usable[uuid]))
        for uuid, cur in current_kib.items()}
    return collector_mod.Collection(
        0.0, (), types.MappingProxyType({}),
        stats.HostSnapshot(0.0, domains))


class Reports:
    """Per guest, a list of report texts served in turn."""

    def __init__(self, texts):
        self.texts = texts

    def __call__(self, uuid):
        item = self.texts[uuid].pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def hits(pages, cache_kib=40000):
    return test_estimator.report({9: (pages * 4096, 0)},
                                 cache_kib=cache_kib)


class TestBalloonAgent(testtools.TestCase):

    def agent(self, reports, **overrides):
        c = conf(policy='cams', **overrides)
        conn = FakeConn()
        a = balloon_agent.BalloonAgent(c, conn, cams.CamsPolicy.from_conf(c),
                                       reporter=Reports(reports))
        return a, conn

    def test_memory_moves_to_the_guest_whose_cache_is_read(self):
        a, conn = self.agent({'vm1': [hits(0), hits(8000)],
                              'vm2': [hits(0), hits(100)]})
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        first = a.step(col, 0.0)
        self.assertEqual({}, first.applied)   # one report: no rate yet
        report = a.step(col, 2.0)
        self.assertEqual({'vm1': 400.0, 'vm2': 368.0}, report.applied)
        self.assertEqual(sorted([('vm1', 400 * 1024,
                                  libvirt.VIR_DOMAIN_AFFECT_LIVE),
                                 ('vm2', 368 * 1024,
                                  libvirt.VIR_DOMAIN_AFFECT_LIVE)]),
                         sorted(conn.sets))

    def test_malformed_report_is_dropped_and_logged_once(self):
        a, conn = self.agent({'vm1': [hits(0), 'garbage', 'garbage',
                                      'garbage'],
                              'vm2': [hits(0)] * 4})
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        logs = []
        self.patch(balloon_agent.LOG, 'warning',
                   lambda fmt, *args: logs.append(fmt % args))
        for t in range(4):
            report = a.step(col, 2.0 * t)
        sources = {g.instance_uuid: g.source for g in report.guests}
        self.assertEqual('host-estimate', sources['vm1'])
        self.assertEqual(1, len([m for m in logs if 'vm1' in m]), logs)
        self.assertEqual([], conn.sets)

    def test_liar_cannot_push_a_neighbour_below_its_floor(self):
        # vm1 claims a huge hit rate; vm2 has 40 MiB to spare above its
        # use + 32 MiB margin, so it may give 40 and no more.
        a, conn = self.agent({'vm1': [hits(10 ** 6 * k) for k in range(10)],
                              'vm2': [hits(k) for k in range(10)]})
        current = {'vm1': 300 * 1024, 'vm2': 300 * 1024}
        for t in range(10):
            col = collection(dict(current), usable_kib={
                'vm1': 200 * 1024,
                'vm2': current['vm2'] - (300 - 72) * 1024})
            report = a.step(col, 2.0 * t)
            for uuid, mb in report.applied.items():
                current[uuid] = int(mb * 1024)
        self.assertEqual(260 * 1024, current['vm2'])
        self.assertEqual(340 * 1024, current['vm1'])

    def test_too_frequent_steps_are_not_run(self):
        a, _conn = self.agent({'vm1': [hits(0)], 'vm2': [hits(0)]})
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        self.assertIsNotNone(a.maybe_step(col, 0.0))
        self.assertIsNone(a.maybe_step(col, 0.5))

    def test_unhonoured_balloon_is_not_retried_every_interval(self):
        n = 40
        a, conn = self.agent({'vm1': [hits(8000 * k) for k in range(n)],
                              'vm2': [hits(100 * k) for k in range(n)]},
                             stuck_intervals=2)
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        for t in range(n):   # the balloons never move
            a.step(col, 2.0 * t)
        sent = [s for s in conn.sets if s[0] == 'vm1']
        # Sent, then held 2 x 2, 2 x 4, 2 x 8, ... intervals.
        self.assertLess(len(sent), n / 4)
        self.assertGreater(len(sent), 1)

    def test_one_broken_guest_does_not_stop_the_others(self):
        # Before the fix a KeyError from one guest's reply (guest-exec
        # without a pid) left the balloon step for every guest.
        a, conn = self.agent({'vm1': [KeyError('pid')] * 3,
                              'vm2': [hits(0), hits(100), hits(200)]})
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        for t in range(3):
            report = a.step(col, 2.0 * t)
        sources = {g.instance_uuid: g.source for g in report.guests}
        self.assertEqual({'vm1': 'host-estimate', 'vm2': 'guest-agent'},
                         sources)
        self.assertIn('vm2', report.estimates)

    def test_a_slow_guest_is_asked_less_and_less(self):
        from iothrottle.compute import guest_agent
        slow = guest_agent.GuestAgentTimeout('guest-exec: no answer')
        asked = []

        def reporter(uuid):
            asked.append(uuid)
            if uuid == 'vm1':
                raise slow
            return hits(0)

        a, _conn = self.agent({})
        a.reporter = reporter
        col = collection({'vm1': 384 * 1024, 'vm2': 384 * 1024})
        for t in range(16):
            a.step(col, 2.0 * t)
        # Asked at intervals 0, 2, 6 and 14 (2, 4 then 8 intervals
        # later): a slow guest costs its budget ever more rarely.
        self.assertEqual(4, asked.count('vm1'))
        self.assertEqual(16, asked.count('vm2'))

    def test_an_unreadable_host_forgets_no_guest(self):
        # libvirtd restarting: the collection reads no domain.  Taken as
        # "every guest gone", it reset a slow guest's back-off (and the
        # hold on a guest that does not honour its balloon).
        from iothrottle.compute import guest_agent
        asked = []

        def reporter(uuid):
            asked.append(uuid)
            raise guest_agent.GuestAgentTimeout('guest-exec: no answer')

        a, _conn = self.agent({})
        a.reporter = reporter
        col = collection({'vm1': 384 * 1024})
        unreadable = collector_mod.Collection(
            0.0, (), types.MappingProxyType({}), stats.HostSnapshot(0.0),
            ('cannot read domain statistics: broken pipe',),
            unreadable=True)
        for t in range(6):
            a.maybe_step(unreadable if t == 3 else col, 2.0 * t)
        # Asked at 0 s, then quiet 2 intervals (4 s), then 4 (12 s).
        self.assertEqual(2, asked.count('vm1'))


class TestMemoryFloors(testtools.TestCase):
    """Conductor mode: the conductor's floor of an instance wins over
    the tiers file's floor of its flavor, if it fits the memory."""

    def step(self, conductor_floors=None, file_floors=None):
        c = conf(policy='cams', floor_fraction=0.25)
        a = balloon_agent.BalloonAgent(
            c, FakeConn(), cams.CamsPolicy.from_conf(c),
            min_memory_mb=file_floors or {},
            reporter=Reports({'vm1': [hits(0)]}))
        if conductor_floors is not None:
            a.set_conductor_floors(conductor_floors)
        col = collection({'vm1': 384 * 1024})
        col = collector_mod.Collection(
            col.taken_at_s, col.samples, types.MappingProxyType(
                {'vm1': types.SimpleNamespace(name='vm1',
                                              flavor='db.small')}),
            col.snapshot)
        logs = []
        self.patch(balloon_agent.LOG, 'warning',
                   lambda fmt, *args: logs.append(fmt % args))
        guest, = a.step(col, 0.0).guests
        return guest.floor_mb, logs

    def test_the_file_serves_when_the_conductor_said_nothing(self):
        self.assertEqual((300.0, []), self.step(
            file_floors={'db.small': 300.0}))
        self.assertEqual((300.0, []), self.step(
            {'other': 100.0}, file_floors={'db.small': 300.0}))
        self.assertEqual((128.0, []), self.step())   # 0.25 of 512 MiB

    def test_the_conductors_floor_wins_over_the_file(self):
        self.assertEqual((450.0, []), self.step(
            {'vm1': 450.0}, file_floors={'db.small': 300.0}))
        # 0 from the conductor: no floor set, the floor_fraction.
        self.assertEqual((128.0, []), self.step(
            {'vm1': 0.0}, file_floors={'db.small': 300.0}))

    def test_a_floor_above_the_memory_is_refused(self):
        for bad in (600.0, float('inf'), float('nan'), -1.0, '450'):
            floor, logs = self.step({'vm1': bad},
                                    file_floors={'db.small': 300.0})
            self.assertEqual(300.0, floor, bad)
            self.assertEqual(1, len(logs), logs)
            self.assertIn('from the conductor for vm1', logs[0])
            self.assertIn('512 MiB', logs[0])
