"""[compute]: the compute agent (inside nova-compute or standalone)."""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'compute',
    title='Compute agent',
    help='Collection of per-instance disk statistics and live actuation '
         'of caps through libvirt.')

OPTS = [
    cfg.StrOpt('libvirt_uri',
               default='qemu:///system',
               help='libvirt connection URI of the local hypervisor.'),
    cfg.StrOpt('tiers_file',
               default='/etc/iothrottle/tiers.yaml',
               help='Standalone mode: YAML file that defines guarantee '
                    'tiers and maps flavor names to them.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
