"""The middleware pipeline of the API, from the outside in:

0. ``_RawPath``: the path as the client sent it, where a proxy in
   front normalised it (Apache merges ``//`` in storage domain keys
   such as ``nbd+unix:///run/s.sock``);
1. ``HTTPProxyToWSGI``: the scheme and host a TLS proxy in front saw
   ([oslo_middleware] enable_proxy_headers_parsing);
2. ``RequestId``: ``x-openstack-request-id`` on every response;
3. ``/healthcheck``: oslo.middleware's Healthcheck app ([healthcheck]),
   answered before authentication, as load balancers need;
4. ``CORS`` when [cors] allowed_origin is set;
5. JSON only: errors are JSON whatever the Accept header says;
6. Keystone's ``auth_token`` ([keystone_authtoken]; ``/`` is public),
   or the test stand-in with [api] auth_strategy = noauth2;
7. the request context (user, project, roles, the policy Enforcer);
8. ``FaultWrapper``: JSON 500 (503 for the database) for anything
   unexpected below;
9. microversions (``OpenStack-API-Version: iothrottle 1.N``);
10. the route table.
"""

import urllib.parse

import oslo_middleware
from oslo_middleware import healthcheck

from microversion_parse import middleware as microversion_middleware

from iothrottle.api import auth
from iothrottle.api import compute
from iothrottle.api import fault
from iothrottle.api import handler
from iothrottle.api import microversion
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.conductor import instances
from iothrottle.db import api

HEALTHCHECK_PATH = '/healthcheck'


class _Healthcheck:
    """Serve HEALTHCHECK_PATH with ``app``, the rest with the pipeline."""

    def __init__(self, application, app):
        self.application = application
        self.healthcheck = app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO') == HEALTHCHECK_PATH:
            return self.healthcheck(environ, start_response)
        return self.application(environ, start_response)


class _JsonOnly:
    """The API speaks JSON only: every response, errors included (webob
    formats an error by the request's Accept header), is JSON."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        environ['HTTP_ACCEPT'] = 'application/json'
        return self.application(environ, start_response)


class _RawPath:
    """Route on the path the client sent, not the one a proxy made.

    Storage domain keys and pool names hold ``/`` and travel unencoded
    (``%2F`` never passes Apache: 404 by default, and mod_proxy_uwsgi
    answers 500 even with ``AllowEncodedSlashes``).  Apache then merges
    slashes (``nbd://host:10809`` arrives as ``nbd:/host:10809``) and
    resolves ``.`` and ``..`` segments before it computes PATH_INFO,
    but passes the request line's path untouched as REQUEST_URI.  When
    that raw path, decoded, starts with SCRIPT_NAME, its rest is the
    PATH_INFO the client meant; otherwise (no REQUEST_URI, a rewritten
    prefix) PATH_INFO stays as the server gave it.  SCRIPT_NAME loses a
    trailing ``/`` (Apache gives ``/iothrottle/`` for that URL), so
    that links made from it have one ``/`` after the prefix.
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        raw = environ.get('REQUEST_URI')
        if raw:
            path = urllib.parse.unquote(raw.partition('?')[0])
            prefix = environ.get('SCRIPT_NAME', '').rstrip('/')
            rest = path[len(prefix):]
            if path.startswith(prefix) and rest.startswith('/'):
                environ['SCRIPT_NAME'], environ['PATH_INFO'] = prefix, rest
        return self.application(environ, start_response)


def deploy(conf, engine=None, nova=None, compute_api=None):
    """The WSGI application of ``conf`` (its options registered and
    parsed), over ``engine`` (default: [database] connection),
    ``nova`` (a function returning a novaclient Client; default from
    [nova], None if it has no credentials) and ``compute_api`` (a
    function returning the compute RPC client that asks agents for
    advice; default over [DEFAULT] transport_url, made on first use)."""
    engine = engine if engine is not None else api.engine_from_conf(conf)
    nova = nova or instances.nova_factory(conf)
    compute_api = compute_api or compute.compute_factory(conf)
    application = handler.Handler(conf, engine, nova, compute_api)
    application = microversion_middleware.MicroversionMiddleware(
        application, microversion.SERVICE_TYPE, microversion.VERSIONS,
        json_error_formatter=util.json_error_formatter)
    application = fault.FaultWrapper(application)
    application = auth.ContextMiddleware(application, policy.enforcer(conf))
    if conf.api.auth_strategy == 'noauth2':
        application = auth.NoAuthMiddleware(application)
    else:
        application = auth.keystone(conf)(application)
    application = _JsonOnly(application)
    if conf.cors.allowed_origin:
        application = oslo_middleware.CORS(application, conf)
    application = _Healthcheck(application,
                               healthcheck.Healthcheck(None, conf))
    application = oslo_middleware.RequestId(application)
    return _RawPath(oslo_middleware.HTTPProxyToWSGI(application, conf))
