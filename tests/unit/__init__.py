"""Unit tests: pure logic, no services.

Hypothesis's per-example deadline (200 ms by default) is a timing
assertion, and timing is the benchmarks' business, not a unit test's:
on a 2-core host running a bench beside the suite, an example of
``test_cams`` that takes 0.1 ms took 265 ms once and failed the run.
Every property test here runs without it.
"""

import hypothesis

hypothesis.settings.register_profile('iothrottle', deadline=None)
hypothesis.settings.load_profile('iothrottle')
