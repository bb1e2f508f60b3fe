"""``SeekModelFilter``: drop a pool whose guarantees the new volume breaks.

Enabled by class name in cinder.conf::

    [DEFAULT]
    scheduler_default_filters = AvailabilityZoneFilter,CapacityFilter,
        CapabilitiesFilter,SeekModelFilter

A pool passes when, with the new volume placed on it, its predicted
throughput (seek model, ``iothrottle.seekmodel``) still covers the sum
of the guarantees of its volumes, the new one's included, with
``[iothrottle_cinder] min_headroom_fraction`` to spare (default 0).  A
pool the model cannot judge (no profile, conductor unreachable, an
unusable volume type) passes: see ``iothrottle.cinder.client``.  Each
rejection is logged at info level with its numbers.
"""

from cinder.scheduler import filters
from oslo_log import log as logging

from iothrottle.cinder import client

LOG = logging.getLogger(__name__)


class SeekModelFilter(filters.BaseBackendFilter):
    """See the module docstring."""

    def __init__(self):
        super().__init__()
        self._advice = {}

    @staticmethod
    def _min_headroom_fraction():
        return client.option('min_headroom_fraction', 0.0)

    def filter_all(self, filter_obj_list, filter_properties):
        # One conductor call for every pool of the request.
        backends = list(filter_obj_list)
        self._advice = client.advise(
            [client.pool_name(b) for b in backends], filter_properties,
            self._min_headroom_fraction())
        return super().filter_all(backends, filter_properties)

    def backend_passes(self, backend_state, filter_properties):
        pool = client.pool_name(backend_state)
        if pool not in self._advice:
            self._advice.update(client.advise(
                [pool], filter_properties, self._min_headroom_fraction()))
        assessment = self._advice.get(pool)
        if assessment is None:
            return True
        if not assessment.passes:
            LOG.info('SeekModelFilter: %s', assessment.reason)
        return assessment.passes
