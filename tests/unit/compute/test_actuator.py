"""The actuator shell against a hand-written fake libvirt domain."""

import libvirt
import testtools

from iothrottle.compute import actuator
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


class FakeDom:
    """Keeps live and persistent limits per disk like libvirt does."""

    def __init__(self, persistent=True, **limits):
        self.persistent = persistent
        self.config = {'vda': dict(iotune.IoTune(**limits).as_params())}
        self.live = {'vda': dict(self.config['vda'])}
        self.set_calls = []

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
        self.assertIn('gone/vda', errors[0])
