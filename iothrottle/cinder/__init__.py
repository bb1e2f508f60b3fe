"""Extensions that Cinder's scheduler loads from iothrottle.

``weigher.SeekModelWeigher`` (``cinder.scheduler.weights``) and
``filter.SeekModelFilter`` (``cinder.scheduler.filters``), enabled by
class name in ``scheduler_default_weighers`` and
``scheduler_default_filters``.  Cinder is not a dependency of
iothrottle: only ``weigher`` and ``filter`` import it; ``placement`` is
pure and ``client`` needs only oslo.
"""
