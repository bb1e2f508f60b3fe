"""Cinder's own scheduler with iothrottle installed beside it.

Run by ``tools/test-cinder`` in a virtualenv with Cinder 29.  Like
cinder-scheduler (``cinder/cmd/scheduler.py``), the process is
monkey-patched by eventlet before anything else is imported, and
Cinder's versioned objects are registered before its scheduler modules
load: the plugins must work where they will run.
"""

from cinder import monkey_patch

monkey_patch.patch()

from cinder import objects  # noqa: E402

objects.register_all()
