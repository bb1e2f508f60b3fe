"""A small REST client of the operator API over a keystoneauth session.

Requests carry ``OpenStack-API-Version: iothrottle 1.0`` (the version
these commands were written for); an error answer becomes an osc-lib
CommandError with the API's own one-line detail (``min_iops: must be a
number >= 0, got -1``).  Servers are resolved by name or id through
Nova (python-novaclient) with the same session, so a project member
finds only its own project's servers.
"""

import urllib.parse

from keystoneauth1 import adapter
from osc_lib import exceptions

from iothrottle.api import microversion

# The microversion these commands speak.
MICROVERSION = '1.0'
# Nova microversion for server lookups (any 2.x answers name and id).
NOVA_API_VERSION = '2.1'


def quote(name):
    """A name for one path segment: '/', '#', '?' and '%' encoded."""
    return urllib.parse.quote(name, safe='@:+')


def quote_key(key):
    """A storage domain key or pool name for the path: '#', '?' and '%'
    encoded, '/' left as it is.  The API's routes for them match across
    segments; an encoded '/' (%2F) never reaches it behind Apache (404,
    or 500 from mod_proxy_uwsgi), and the API undoes Apache's merging
    of '//' (``iothrottle.api.deploy``)."""
    return urllib.parse.quote(key, safe='/@:+')


class Client:
    """``get``/``post``/``put``/``delete`` of API paths, JSON in and out."""

    def __init__(self, session, interface=None, region_name=None,
                 endpoint_override=None, additional_headers=None,
                 nova_factory=None):
        self.session = session
        self.interface = interface
        self.region_name = region_name
        self.api = adapter.Adapter(
            session, service_type=microversion.SERVICE_TYPE,
            interface=interface, region_name=region_name,
            endpoint_override=endpoint_override,
            default_microversion=MICROVERSION,
            additional_headers=additional_headers, raise_exc=False)
        self._nova_factory = nova_factory or self._novaclient

    def request(self, method, path, body=None, params=None):
        kwargs = {'headers': {'Accept': 'application/json'}}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        response = self.api.request(path, method, **kwargs)
        if response.status_code >= 400:
            raise exceptions.CommandError(_detail(response))
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def get(self, path, params=None):
        return self.request('GET', path, params=params)

    def post(self, path, body):
        return self.request('POST', path, body=body)

    def put(self, path, body):
        return self.request('PUT', path, body=body)

    def delete(self, path, params=None):
        return self.request('DELETE', path, params=params)

    def nova(self):
        """A novaclient Client on the same session."""
        return self._nova_factory()

    def _novaclient(self):
        from novaclient import client as nova_client
        return nova_client.Client(
            NOVA_API_VERSION, session=self.session,
            region_name=self.region_name, endpoint_type=self.interface)


def _detail(response):
    """The error's one-line detail, else its status line."""
    try:
        error = response.json()['errors'][0]
        return '%s (HTTP %s)' % (error['detail'], response.status_code)
    except (ValueError, KeyError, IndexError, TypeError):
        return 'HTTP %s: %s' % (response.status_code,
                                (response.text or '').strip()[:200])
