"""Extensions that Nova loads from iothrottle through its entry points.

Nova is not a dependency of iothrottle.  ``extra_spec_validators``
imports Nova only inside the functions nova-api calls; ``monitor``
subclasses Nova's CPU monitor and imports Nova at the top, so it is only
imported by nova-compute itself (through the entry point).
"""
