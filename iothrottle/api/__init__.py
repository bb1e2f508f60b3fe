"""``iothrottle-api``: the operator REST API over the conductor's
database, modelled on OpenStack Placement.

``handler.py`` is the route table, ``handlers/`` one module per
resource, ``policies/`` the policy defaults in code (secure RBAC),
``deploy.py`` the middleware pipeline (request id, proxy headers,
healthcheck, CORS, Keystone ``auth_token``, microversions, JSON
faults).  The WSGI application for uwsgi or gunicorn is
``iothrottle.wsgi.api:application``; ``iothrottle-api`` serves it from
one process for a quick local run.
"""
