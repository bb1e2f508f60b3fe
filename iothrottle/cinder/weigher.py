"""``SeekModelWeigher``: prefer the pool with the most predicted headroom.

Enabled by class name in cinder.conf::

    [DEFAULT]
    scheduler_default_weighers = CapacityWeigher,SeekModelWeigher

The weight of a pool is ``placement.Assessment.headroom_fraction``: the
share of its predicted throughput, with the new volume placed on it,
that is left once every guarantee there is kept (1: nothing promised;
-1: promising twice what it delivers, or worse).  The scale is fixed
(``minval``/``maxval``), so Cinder normalises it to (w + 1) / 2 whatever
pools are at hand, and a pool the model cannot judge gets the middle,
``placement.NEUTRAL_WEIGHT``.  ``[iothrottle_cinder] weight_multiplier``
scales it against the other weighers.  See ``iothrottle.cinder.client``
for where the pools' states come from and when the weigher steps aside.
"""

from cinder.scheduler import weights

from iothrottle.cinder import client
from iothrottle.cinder import placement


class SeekModelWeigher(weights.BaseHostWeigher):
    """See the module docstring."""

    minval = placement.MIN_WEIGHT
    maxval = placement.MAX_WEIGHT

    def __init__(self):
        super().__init__()
        self._advice = {}

    def weight_multiplier(self):
        return client.option('weight_multiplier', 1.0)

    def weigh_objects(self, weighed_obj_list, weight_properties):
        # One conductor call for every pool of the request.
        self._advice = client.advise(
            [client.pool_name(w.obj) for w in weighed_obj_list],
            weight_properties)
        return super().weigh_objects(weighed_obj_list, weight_properties)

    def _weigh_object(self, backend_state, weight_properties):
        pool = client.pool_name(backend_state)
        if pool not in self._advice:
            self._advice.update(client.advise([pool], weight_properties))
        assessment = self._advice.get(pool)
        if assessment is None:
            return placement.NEUTRAL_WEIGHT
        return assessment.weight
