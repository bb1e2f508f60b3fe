"""Who is asking: Keystone's ``auth_token`` (or, in tests, a stand-in
that takes the roles and project from headers) and the request context
made from what it leaves in the environment."""

from keystonemiddleware import auth_token
from oslo_context import context as oslo_context
from oslo_middleware import request_id
import webob.dec
import webob.exc

from iothrottle.api import util

# Paths served without a token: the version document (clients discover
# the microversions before they authenticate).
PUBLIC_PATHS = ('/', '')


class RequestContext(oslo_context.RequestContext):
    """oslo.context's context and the Enforcer to check policies with."""

    def __init__(self, enforcer=None, **kwargs):
        super().__init__(**kwargs)
        self.enforcer = enforcer


class ContextMiddleware:
    """Make the RequestContext from the identity headers; 401 for a
    request (but to a public path) that carries none."""

    def __init__(self, application, enforcer):
        self.application = application
        self.enforcer = enforcer

    @webob.dec.wsgify
    def __call__(self, req):
        ctx = RequestContext.from_environ(
            req.environ, request_id=req.environ.get(request_id.ENV_REQUEST_ID))
        ctx.enforcer = self.enforcer
        if ctx.user_id is None and req.path_info not in PUBLIC_PATHS:
            raise webob.exc.HTTPUnauthorized(
                'no user in the request',
                json_formatter=util.json_error_formatter)
        req.environ[util.CONTEXT_ENVIRON] = ctx
        return self.application


class AuthProtocol(auth_token.AuthProtocol):
    """keystonemiddleware's auth_token, skipping the public paths."""

    def __init__(self, application, conf):
        self._unauthenticated = application
        super().__init__(application, conf)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO') in PUBLIC_PATHS:
            return self._unauthenticated(environ, start_response)
        return super().__call__(environ, start_response)


def keystone(conf):
    """The auth_token middleware factory, configured from ``conf``'s
    ``[keystone_authtoken]``."""
    def middleware(application):
        return AuthProtocol(application, {'oslo_config_config': conf})
    return middleware


class NoAuthMiddleware:
    """For tests only ([api] auth_strategy = noauth2), as Placement's:
    ``X-Auth-Token: USER[:PROJECT]`` names the user and project (the
    project defaults to the user), ``X-Roles`` the roles (already
    expanded: ``admin,member,reader``), ``OpenStack-System-Scope: all``
    makes the token system-scoped.  No token: 401."""

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        if req.path_info in PUBLIC_PATHS:
            return self.application
        token = req.headers.get('X-Auth-Token')
        if not token:
            raise webob.exc.HTTPUnauthorized(
                'no X-Auth-Token', json_formatter=util.json_error_formatter)
        user_id, _sep, project_id = token.partition(':')
        req.headers['X-User-Id'] = user_id
        if req.headers.get('OpenStack-System-Scope'):
            req.headers.pop('X-Project-Id', None)
        else:
            req.headers['X-Project-Id'] = project_id or user_id
        req.headers['X-Roles'] = req.headers.get('X-Roles', '')
        req.headers['X-Identity-Status'] = 'Confirmed'
        return self.application
