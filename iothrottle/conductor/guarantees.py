"""Flavor name -> Guarantee for the conductor, cached and refreshed.

:class:`Resolver` gives the ``covers``/``guarantee_for`` pair the core
needs over a *fetch* function (flavor name -> Guarantee, None when the
flavor gives none, ExtraSpecError/ValueError when its extra specs are
invalid).  Values are cached for ``refresh_s``; when fetching fails
(Nova or the database unreachable) the last value is kept.  An invalid
flavor gives its instances no guarantee and one logged warning, never a
crash.

Fetch functions: :func:`file_fetch` (a tiers file), :func:`db_fetch`
(the database alone) and :class:`NovaFetch` (flavor extra specs read
with python-novaclient, tiers from the database, results cached in the
database).
"""

import time

from oslo_log import log as logging

from iothrottle.controller import model
from iothrottle.db import api
from iothrottle import extra_specs

LOG = logging.getLogger(__name__)


class Resolver:
    """See the module docstring."""

    def __init__(self, fetch, refresh_s=300.0, clock=time.monotonic):
        self.fetch = fetch
        self.refresh_s = refresh_s
        self.clock = clock
        self._cache = {}      # flavor -> (Guarantee or None, fetched_at_s)
        self._warned = set()

    def _lookup(self, flavor):
        if not flavor:
            return None
        now = self.clock()
        entry = self._cache.get(flavor)
        if entry is not None and now - entry[1] < self.refresh_s:
            return entry[0]
        try:
            guarantee = self.fetch(flavor)
            self._warned.discard(('fetch', flavor))
        except ValueError as exc:   # ExtraSpecError is a ValueError
            if ('invalid', flavor, str(exc)) not in self._warned:
                self._warned.add(('invalid', flavor, str(exc)))
                LOG.warning('flavor %r: %s; its instances get no '
                            'guarantee', flavor, exc)
            guarantee = model.NO_GUARANTEE
        except Exception as exc:
            if ('fetch', flavor) not in self._warned:
                self._warned.add(('fetch', flavor))
                LOG.warning('cannot read the guarantee of flavor %r (%s); '
                            '%s', flavor, exc,
                            'keeping the last one' if entry else
                            'no guarantee until it can be read')
            guarantee = entry[0] if entry is not None else None
        self._cache[flavor] = (guarantee, now)
        return guarantee

    def covers(self, flavor):
        return self._lookup(flavor) is not None

    def guarantee_for(self, flavor):
        return self._lookup(flavor) or model.NO_GUARANTEE


def file_fetch(tiers):
    """Fetch from a :class:`iothrottle.tiers.Tiers` (a tiers file)."""
    def fetch(flavor):
        return tiers.guarantee_for(flavor) if tiers.covers(flavor) else None
    return fetch


def db_fetch(engine):
    """Fetch from the database: the flavor cache, else a tier named like
    the flavor."""
    def fetch(flavor):
        cached = api.cached_flavor(engine, flavor)
        if cached is not None:
            if cached.error:
                raise extra_specs.ExtraSpecError(cached.error)
            return cached.guarantee
        return api.list_tiers(engine).get(flavor)
    return fetch


class NovaFetch:
    """Fetch from Nova's flavor extra specs (``iothrottle:`` keys).

    ``client`` is a novaclient ``Client`` (or anything with
    ``flavors.list(is_public=None)`` returning objects with ``id``,
    ``name`` and ``get_keys()``); ``engine`` the database with the tiers
    (None: no tiers).  The flavor list is read again at most every
    ``refresh_s``.  Each result is cached in the database (best effort);
    when Nova does not answer the database cache is used.
    """

    def __init__(self, client, engine=None, refresh_s=300.0,
                 clock=time.monotonic):
        self.client = client
        self.engine = engine
        self.refresh_s = refresh_s
        self.clock = clock
        self._flavors = None
        self._listed_at = None
        self._tiers = {}

    def _flavor_list(self):
        now = self.clock()
        if self._flavors is None or now - self._listed_at >= self.refresh_s:
            self._flavors = {f.name: f for f in
                             self.client.flavors.list(is_public=None)}
            self._listed_at = now
        return self._flavors

    def _known_tiers(self):
        if self.engine is not None:
            try:
                self._tiers = api.list_tiers(self.engine)
            except Exception as exc:
                LOG.warning('tiers: database unreachable (%s); using the '
                            'last %d known', exc, len(self._tiers))
        return self._tiers

    def __call__(self, flavor_name):
        try:
            flavor = self._flavor_list().get(flavor_name)
        except Exception:
            if self.engine is None:
                raise
            return db_fetch(self.engine)(flavor_name)
        if flavor is None:
            return None
        specs = flavor.get_keys()
        try:
            guarantee = extra_specs.guarantee_from_extra_specs(
                specs, self._known_tiers())
        except extra_specs.ExtraSpecError as exc:
            self._cache(flavor, error=str(exc))
            raise
        self._cache(flavor, guarantee=guarantee)
        if guarantee.is_empty and not extra_specs.own_specs(specs):
            return None
        return guarantee

    def _cache(self, flavor, **result):
        if self.engine is None:
            return
        try:
            api.cache_flavor(self.engine, str(flavor.id), flavor.name,
                             **result)
        except Exception as exc:
            LOG.debug('caching flavor %s failed: %s', flavor.name, exc)


def nova_client(conf):
    """A novaclient Client from the ``[nova]`` section (keystoneauth1)."""
    from keystoneauth1 import loading as ks_loading
    from novaclient import client as nova_client_mod
    auth = ks_loading.load_auth_from_conf_options(conf, 'nova')
    session = ks_loading.load_session_from_conf_options(conf, 'nova',
                                                        auth=auth)
    return nova_client_mod.Client(
        conf.nova.api_version, session=session,
        region_name=conf.nova.region_name,
        endpoint_type=conf.nova.interface)
