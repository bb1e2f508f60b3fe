"""The actuator shell against a hand-written fake libvirt domain, and
the baseline record against libvirt's test driver."""

import fixtures
import libvirt
import testtools

from iothrottle.compute import actuator
from iothrottle.compute import baseline_record
from iothrottle.compute import connection
from iothrottle.compute import instances
from iothrottle.compute import iotune
from iothrottle.controller import model

LIVE = libvirt.VIR_DOMAIN_AFFECT_LIVE
CONFIG = libvirt.VIR_DOMAIN_AFFECT_CONFIG


class NoDomain(libvirt.libvirtError):
    """libvirt's "no such domain", without libvirt's last real error."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.err = None

    def get_error_code(self):
        return libvirt.VIR_ERR_NO_DOMAIN


class NoMetadata(NoDomain):

    def get_error_code(self):
        return libvirt.VIR_ERR_NO_DOMAIN_METADATA


class FakeDom:
    """Keeps live and persistent limits per disk like libvirt does, and
    one metadata element per flag."""

    def __init__(self, persistent=True, **limits):
        self.persistent = persistent
        self.config = {'vda': dict(iotune.IoTune(**limits).as_params())}
        self.live = {'vda': dict(self.config['vda'])}
        self.set_calls = []
        self.meta = {}

    def metadata(self, kind, uri, flags):
        if flags not in self.meta:
            raise NoMetadata('metadata not found')
        return self.meta[flags]

    def setMetadata(self, kind, text, key, uri, flags):
        if text is None:
            self.meta.pop(flags, None)
        else:
            self.meta[flags] = text

    def isPersistent(self):
        return self.persistent

    def blockIoTune(self, dev, flags):
        if flags == CONFIG:
            if not self.persistent:
                raise libvirt.libvirtError('transient domain')
            return dict(self.config[dev], group_name='g')
        return dict(self.live[dev], total_iops_sec_max=0)

    def setBlockIoTune(self, dev, params, flags):
        self.set_calls.append((dev, dict(params), flags))
        self.live[dev].update(params)


class FakeConn:

    def __init__(self, **doms):
        self.doms = doms

    def lookupByUUIDString(self, uuid):
        if uuid not in self.doms:
            raise NoDomain('no domain with matching uuid')
        return self.doms[uuid]


def _instance(uuid):
    return instances.Instance(uuid=uuid, domain_name=uuid, disks=(
        instances.Disk('vda', 'file', '/x', 'local:h:sda'),))


class TestActuator(testtools.TestCase):

    def test_cap_is_live_only_and_restore_puts_baseline_back(self):
        dom = FakeDom(total_iops_sec=300)
        act = actuator.Actuator(FakeConn(u=dom))
        baseline = act.baseline('u', 'vda')
        self.assertEqual(iotune.IoTune(total_iops_sec=300), baseline)
        act.set_cap('u', 'vda', model.Cap(50, 0), baseline)
        self.assertEqual(LIVE, dom.set_calls[-1][2])
        self.assertEqual(50, dom.live['vda']['total_iops_sec'])
        self.assertEqual(300, dom.config['vda']['total_iops_sec'])
        act.restore('u', 'vda', baseline)
        self.assertEqual(dom.config['vda'], dom.live['vda'])

    def test_in_force_compares_the_live_limits_with_the_cap(self):
        dom = FakeDom(total_iops_sec=300)
        act = actuator.Actuator(FakeConn(u=dom))
        baseline = act.baseline('u', 'vda')
        cap = model.Cap(50, 0)
        self.assertFalse(act.in_force('u', 'vda', cap, baseline))
        act.set_cap('u', 'vda', cap, baseline)
        self.assertTrue(act.in_force('u', 'vda', cap, baseline))
        self.assertFalse(act.in_force('u', 'vda', model.Cap(40, 0),
                                      baseline))

    def test_transient_baseline_is_the_live_limits(self):
        dom = FakeDom(persistent=False, write_iops_sec=90)
        act = actuator.Actuator(FakeConn(u=dom))
        self.assertIsNone(act.persistent('u', 'vda'))
        self.assertEqual(iotune.IoTune(write_iops_sec=90),
                         act.baseline('u', 'vda'))

    def test_missing_domain_is_disk_gone(self):
        act = actuator.Actuator(FakeConn())
        self.assertRaises(actuator.DiskGone, act.live, 'u', 'vda')
        self.assertRaises(LookupError, act.restore, 'u', 'vda',
                          iotune.IoTune())

    def test_reconcile_restores_only_unleased_leftovers(self):
        left = FakeDom(total_iops_sec=300)
        left.live['vda']['total_iops_sec'] = 12
        leased = FakeDom(total_iops_sec=300)
        leased.live['vda']['total_iops_sec'] = 40
        clean = FakeDom(total_iops_sec=300)
        transient = FakeDom(persistent=False)
        transient.live['vda']['total_iops_sec'] = 5
        act = actuator.Actuator(FakeConn(
            left=left, leased=leased, clean=clean, transient=transient))
        restored, errors = act.reconcile(
            [_instance(u) for u in ('left', 'leased', 'clean', 'transient',
                                    'gone')], {'leased/vda'})
        self.assertEqual(['left/vda'], restored)
        self.assertEqual(300, left.live['vda']['total_iops_sec'])
        self.assertEqual(40, leased.live['vda']['total_iops_sec'])
        self.assertEqual([], clean.set_calls)
        self.assertEqual(5, transient.live['vda']['total_iops_sec'])
        self.assertEqual(1, len(errors))
        self.assertIn('gone', errors[0])


NODE_XML = """<node>
  <domain type='test'>
    <name>vm1</name>
    <uuid>11111111-2222-3333-4444-555555555555</uuid>
    <memory>65536</memory>
    <vcpu>1</vcpu>
    <os><type>hvm</type></os>
    <devices>
      <disk type='file' device='disk'>
        <source file='/guest/vm1.img'/>
        <target dev='vda' bus='virtio'/>
        <iotune>
          <total_iops_sec>300</total_iops_sec>
          <total_iops_sec_max>1000</total_iops_sec_max>
        </iotune>
      </disk>
    </devices>
  </domain>
</node>
"""
UUID = '11111111-2222-3333-4444-555555555555'
OPERATOR = iotune.IoTune(total_iops_sec=300)


def _record(dom, flags):
    try:
        return dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                            baseline_record.NAMESPACE_URI, flags)
    except libvirt.libvirtError:
        return None


class TestBaselineInTheDomain(testtools.TestCase):
    """Against libvirt's test driver, on a private node file."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(name='iothrottle'))
        node = self.useFixture(fixtures.TempDir()).join('node.xml')
        with open(node, 'w') as f:
            f.write(NODE_XML)
        # libvirt logs every "metadata not found" it raises to stderr.
        connection.silence_default_errors()
        self.addCleanup(libvirt.registerErrorHandler, None, None)
        self.conn = libvirt.open('test://' + node)
        self.addCleanup(self.conn.close)
        self.dom = self.conn.lookupByUUIDString(UUID)
        self.assertTrue(self.dom.isActive())

    def iops(self, flags):
        return self.dom.blockIoTune('vda', flags)['total_iops_sec']

    def test_cap_records_the_baseline_live_and_restore_drops_it(self):
        act = actuator.Actuator(self.conn)
        baseline = act.baseline(UUID, 'vda')
        act.set_cap(UUID, 'vda', model.Cap(50, 0), baseline)
        self.assertEqual(50, self.iops(LIVE))
        self.assertEqual({'vda': OPERATOR}, act.recorded(UUID))
        self.assertIsNone(_record(self.dom, CONFIG))
        act.restore(UUID, 'vda', baseline)
        self.assertEqual(300, self.iops(LIVE))
        self.assertEqual({}, act.recorded(UUID))

    def test_a_cap_carried_by_live_migration_is_not_a_baseline(self):
        # Nova's live migration makes the live XML (cap and record) the
        # destination's persistent XML; redefining the domain with it
        # does the same here.  Before the record, the persistent limits
        # (the cap) were read as the operator's: a permanent cap.
        act = actuator.Actuator(self.conn)
        act.set_cap(UUID, 'vda', model.Cap(50, 0),
                    act.baseline(UUID, 'vda'))
        self.conn.defineXML(self.dom.XMLDesc(
            libvirt.VIR_DOMAIN_XML_MIGRATABLE))
        self.assertEqual(50, self.iops(CONFIG))
        destination = actuator.Actuator(self.conn)
        self.assertEqual(OPERATOR, destination.baseline(UUID, 'vda'))
        restored, errors = destination.reconcile(
            [_instance(UUID)], leased=set())
        self.assertEqual(([UUID + '/vda'], []), (restored, errors))
        self.assertEqual((300, 300), (self.iops(LIVE), self.iops(CONFIG)))
        self.assertIn('the persistent limits held a cap', self.log.output)
        self.assertIsNone(_record(self.dom, LIVE))
        self.assertIsNone(_record(self.dom, CONFIG))

    def test_restart_after_migration_restores_from_the_record(self):
        act = actuator.Actuator(self.conn)
        act.set_cap(UUID, 'vda', model.Cap(50, 0),
                    act.baseline(UUID, 'vda'))
        self.conn.defineXML(self.dom.XMLDesc(
            libvirt.VIR_DOMAIN_XML_MIGRATABLE))
        self.dom.destroy()
        self.dom.create()
        self.assertEqual(50, self.iops(LIVE))
        act.reconcile([_instance(UUID)], leased=set())
        self.assertEqual((300, 300), (self.iops(LIVE), self.iops(CONFIG)))

    def test_malformed_record_is_ignored(self):
        self.dom.setMetadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                             '<baseline><disk dev="vda" total_iops_sec='
                             '"-4"/></baseline>', baseline_record.KEY,
                             baseline_record.NAMESPACE_URI, LIVE)
        act = actuator.Actuator(self.conn)
        self.assertEqual({}, act.recorded(UUID))
        self.assertEqual(OPERATOR, act.baseline(UUID, 'vda'))
