"""[iothrottle_cinder]: the seek-model weigher and filter in Cinder.

These options live in ``cinder.conf``: the plugins register the group
on cinder-scheduler's own configuration at their first use (see
``iothrottle.cinder.client``).  They are listed here too, so that
``oslo-config-generator --namespace iothrottle`` documents them.
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'iothrottle_cinder',
    title='iothrottle in Cinder\'s scheduler',
    help='How SeekModelWeigher and SeekModelFilter, enabled in '
         'cinder-scheduler\'s scheduler_default_weighers and '
         'scheduler_default_filters, ask the iothrottle conductor for the '
         'pools\' profiles and placed volumes.')

OPTS = [
    cfg.StrOpt('transport_url',
               secret=True,
               help='oslo.messaging URL of the message bus the iothrottle '
                    'conductor listens on (its [DEFAULT] transport_url). '
                    'Unset: Cinder\'s own [DEFAULT] transport_url.'),
    cfg.FloatOpt('rpc_timeout_s',
                 default=2.0, min=0.1,
                 help='How long a scheduling request waits for the '
                      'conductor\'s answer before the plugins step aside '
                      '(neutral weight, every pool passes). Seconds.'),
    cfg.FloatOpt('cache_s',
                 default=30.0, min=0.0,
                 help='A pool\'s state is asked for again once the '
                      'answer is this old; the filter and the weigher of '
                      'one request share one answer. Seconds.'),
    cfg.FloatOpt('retry_s',
                 default=60.0, min=0.0,
                 help='After the conductor failed to answer, the plugins '
                      'step aside for this long before asking again, so '
                      'that requests do not each wait rpc_timeout_s. '
                      'Seconds.'),
    cfg.FloatOpt('min_headroom_fraction',
                 default=0.0, min=-1.0, max=1.0,
                 help='SeekModelFilter passes a pool whose predicted '
                      'throughput with the new volume, less the sum of the '
                      'guarantees placed there, is at least this fraction '
                      'of the predicted throughput: 0 = the guarantees '
                      'just fit; 0.1 keeps 10 % spare. Unitless.'),
    cfg.FloatOpt('weight_multiplier',
                 default=1.0,
                 help='Multiplier of SeekModelWeigher\'s weight (headroom '
                      'after placement on a fixed scale from -1 to 1, '
                      'normalised to 0..1) against the other weighers; '
                      'negative prefers the fullest pool. Unitless.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
