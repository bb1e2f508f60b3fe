"""The route table: path -> {HTTP method: handler}.

Read it as the API's map.  A path of a known route with a method it
does not declare answers 405 with an ``Allow`` header; any other path
404.  Storage domain keys and pool names may hold ``/``: their
parameters match across segments, and the routes with a fixed suffix
come first so that the suffix is never taken as part of a name.
"""

import routes
import webob.exc

from iothrottle.api.handlers import decision
from iothrottle.api.handlers import flavor
from iothrottle.api.handlers import host
from iothrottle.api.handlers import instance
from iothrottle.api.handlers import pool
from iothrottle.api.handlers import root
from iothrottle.api.handlers import storage_domain
from iothrottle.api.handlers import tier
from iothrottle.api import util

# Parameters that may hold '/' (percent-encoded by clients, decoded by
# the WSGI server).
_ANY = '.+'

ROUTE_DECLARATIONS = (
    ('/', {'GET': root.home}),
    # Mounted under a prefix (uwsgi --mount /iothrottle=...), the root
    # is the empty path.
    ('', {'GET': root.home}),
    ('/tiers', {'GET': tier.list_tiers, 'POST': tier.create_tier}),
    ('/tiers/{name}', {'GET': tier.show_tier, 'PUT': tier.update_tier,
                       'DELETE': tier.delete_tier}),
    ('/flavors/{flavor}/guarantee', {'GET': flavor.show_guarantee}),
    ('/storage_domains', {'GET': storage_domain.list_domains}),
    ('/storage_domains/{key:%s}/learned_peak' % _ANY,
     {'DELETE': storage_domain.reset_peak}),
    ('/storage_domains/{key:%s}' % _ANY,
     {'GET': storage_domain.show_domain,
      'PUT': storage_domain.declare_capacity}),
    ('/instances/{uuid}', {'GET': instance.show_instance}),
    ('/pools', {'GET': pool.list_pools}),
    ('/pools/{pool:%s}/volumes/{volume_id}' % _ANY,
     {'DELETE': pool.remove_volume}),
    ('/pools/{pool:%s}/volumes' % _ANY, {'POST': pool.add_volume}),
    ('/pools/{pool:%s}' % _ANY, {'GET': pool.show_pool,
                                 'PUT': pool.set_profile,
                                 'DELETE': pool.delete_pool}),
    ('/decisions', {'GET': decision.list_decisions}),
    ('/hosts/{host}/advice', {'GET': host.show_advice}),
)


def _method_not_allowed(environ, start_response):
    allowed = environ['wsgiorg.routing_args'][1].get('_methods', '')
    response = webob.exc.HTTPMethodNotAllowed(
        'The method specified is not allowed for this resource.',
        headers={'Allow': allowed},
        json_formatter=util.json_error_formatter)
    return response(environ, start_response)


def make_map(declarations):
    """A routes Mapper of ``declarations``, with a 405 after each path."""
    mapper = routes.Mapper()
    for path, methods in declarations:
        for method, handler in methods.items():
            mapper.connect(path, action=handler,
                           conditions={'method': [method]})
        mapper.connect(path, action=_method_not_allowed,
                       _methods=', '.join(sorted(methods)))
    return mapper


class Handler:
    """The application: dispatches to the handler of the route."""

    def __init__(self, conf, engine, nova, compute=None):
        self._map = make_map(ROUTE_DECLARATIONS)
        self.conf = conf
        self.engine = engine
        self.nova = nova
        self.compute = compute

    def __call__(self, environ, start_response):
        environ['iothrottle.conf'] = self.conf
        environ['iothrottle.engine'] = self.engine
        environ['iothrottle.nova'] = self.nova
        environ['iothrottle.compute'] = self.compute
        result = self._map.match(environ=environ)
        if result is None:
            response = webob.exc.HTTPNotFound(
                'no such resource', json_formatter=util.json_error_formatter)
            return response(environ, start_response)
        handler = result.pop('action')
        environ['wsgiorg.routing_args'] = ((), result)
        return handler(environ, start_response)
