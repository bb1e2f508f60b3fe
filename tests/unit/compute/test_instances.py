"""Parsing domain XML into instances, disks and storage domain keys."""

import os.path

import testtools

from iothrottle.compute import instances
from iothrottle.compute import iotune

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')
UUID = '6f1a3c1e-4b7d-4f8e-9a52-2d5e6c7b8a90'


def _device_of(path):
    """Stand-in for the shell's st_dev resolution."""
    return {'/dev/sdb2': 'sdb'}.get(path, 'nvme0n1')


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as stream:
        return stream.read()


def _bare_domain(disks_xml, metadata=''):
    return ("<domain type='kvm'><name>plain</name>"
            "<uuid>11111111-2222-3333-4444-555555555555</uuid>%s"
            "<devices>%s</devices></domain>" % (metadata, disks_xml))


class TestNovaDomain(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.instance = instances.parse_instance(
            _fixture('nova_domain.xml'), 'cmp1', _device_of)

    def test_identity_from_nova_metadata(self):
        self.assertEqual(UUID, self.instance.uuid)
        self.assertEqual('instance-0000002a', self.instance.domain_name)
        self.assertEqual('db-primary', self.instance.name)
        self.assertEqual('m1.large', self.instance.flavor)
        self.assertEqual('demo', self.instance.project)
        self.assertTrue(self.instance.is_nova)

    def test_disks_in_order_empty_cdrom_left_out(self):
        self.assertEqual(['vda', 'vdb', 'vdc', 'vdd', 'vde', 'vdf'],
                         [d.device for d in self.instance.disks])

    def test_storage_domain_keys(self):
        keys = {d.device: d.storage_domain for d in self.instance.disks}
        self.assertEqual({
            'vda': 'local:cmp1:nvme0n1',
            'vdb': 'nbd+unix:///run/iothrottle/store.sock',
            'vdc': 'rbd:volumes@ceph-mon1+ceph-mon2',
            'vdd': 'nbd://10.0.0.5:10810',
            'vde': 'iscsi:iqn.2010-10.org.openstack:volume-0d3c2b1a',
            'vdf': 'local:cmp1:sdb',
        }, keys)

    def test_kinds_and_sources(self):
        vda, vdb = self.instance.disk('vda'), self.instance.disk('vdb')
        self.assertEqual('file', vda.kind)
        self.assertTrue(vda.source.endswith('/disk'))
        self.assertEqual('network:nbd', vdb.kind)
        self.assertEqual('vol-a', vdb.source)
        self.assertEqual('block', self.instance.disk('vdf').kind)
        self.assertIsNone(self.instance.disk('sda'))

    def test_static_iotune(self):
        self.assertEqual(iotune.IoTune(total_iops_sec=500,
                                       total_bytes_sec=104857600),
                         self.instance.disk('vda').iotune)
        self.assertEqual(iotune.IoTune(read_iops_sec=300,
                                       write_iops_sec=100),
                         self.instance.disk('vdb').iotune)
        self.assertTrue(self.instance.disk('vdc').iotune.is_unlimited)


class TestOtherDomains(testtools.TestCase):

    def test_non_nova_domain_tracked_with_empty_flavor(self):
        instance = instances.parse_instance(_bare_domain(
            "<disk type='file' device='disk'><source file='/x.img'/>"
            "<target dev='vda'/></disk>"), 'h', _device_of)
        self.assertEqual('', instance.flavor)
        self.assertEqual('', instance.name)
        self.assertFalse(instance.is_nova)
        self.assertEqual('local:h:nvme0n1', instance.disks[0].storage_domain)

    def test_nbd_tcp_default_port(self):
        instance = instances.parse_instance(_bare_domain(
            "<disk type='network'><source protocol='nbd' name='e'>"
            "<host name='store'/></source><target dev='vda'/></disk>"),
            'h', _device_of)
        self.assertEqual('nbd://store:10809',
                         instance.disks[0].storage_domain)

    def test_rbd_cluster_from_config_file_and_bare_pool(self):
        instance = instances.parse_instance(_bare_domain(
            "<disk type='network'><source protocol='rbd' name='fast/v1'>"
            "<config file='/etc/ceph/east.conf'/></source>"
            "<target dev='vda'/></disk>"
            "<disk type='network'><source protocol='rbd' name='slow/v2'/>"
            "<target dev='vdb'/></disk>"), 'h', _device_of)
        self.assertEqual(['rbd:fast@east', 'rbd:slow'],
                         [d.storage_domain for d in instance.disks])

    def test_disks_of_one_store_share_a_key(self):
        instance = instances.parse_instance(_bare_domain(
            "<disk type='network'><source protocol='nbd' name='a'>"
            "<host transport='unix' socket='/s.sock'/></source>"
            "<target dev='vda'/></disk>"
            "<disk type='network'><source protocol='nbd' name='b'>"
            "<host transport='unix' socket='/s.sock'/></source>"
            "<target dev='vdb'/></disk>"), 'h', _device_of)
        self.assertEqual(1, len({d.storage_domain
                                 for d in instance.disks}))

    def test_malformed_xml_is_one_line_error(self):
        exc = self.assertRaises(ValueError, instances.parse_instance,
                                '<domain><name>x', 'h', _device_of)
        self.assertIn('domain XML is malformed', str(exc))
        self.assertNotIn('\n', str(exc))

    def test_missing_uuid_names_domain(self):
        exc = self.assertRaises(
            ValueError, instances.parse_instance,
            '<domain><name>lost</name></domain>', 'h', _device_of)
        self.assertIn("'lost'", str(exc))

    def test_bad_iotune_value_names_disk(self):
        exc = self.assertRaises(ValueError, instances.parse_instance,
                                _bare_domain(
                                    "<disk type='file'><source file='/a'/>"
                                    "<target dev='vdq'/><iotune>"
                                    "<total_iops_sec>lots</total_iops_sec>"
                                    "</iotune></disk>"), 'h', _device_of)
        self.assertIn('disk vdq', str(exc))
        self.assertIn('total_iops_sec', str(exc))


class TestDomainId(testtools.TestCase):

    def test_running_domain_id_and_none_otherwise(self):
        running = _bare_domain('').replace("type='kvm'", "type='kvm' id='7'")
        self.assertEqual(7, instances.parse_instance(
            running, 'h', _device_of).domain_id)
        for xml in (_bare_domain(''), _bare_domain('').replace(
                "type='kvm'", "type='kvm' id='x'")):
            self.assertIsNone(instances.parse_instance(
                xml, 'h', _device_of).domain_id)
