"""Flavor name -> Guarantee for the conductor, cached and refreshed.

:class:`Resolver` gives the ``covers``/``guarantee_for`` pair the core
needs over a *fetch* function (flavor name -> Guarantee, None when the
flavor gives none, ExtraSpecError/ValueError when its extra specs are
invalid).  Values are cached for ``refresh_s``; when fetching fails
(Nova or the database unreachable) the last value is kept.  An invalid
flavor gives its instances no guarantee and one logged warning, never a
crash.

Fetch functions: :func:`file_fetch` (a tiers file) and :func:`db_fetch`
(the database alone).  These resolve the flavor *name* an agent reports,
so they trust every compute host: they serve ``[conductor] guarantees =
file`` and ``db``, for testbeds and standalone use.  With ``nova`` the
conductor reads each instance's own flavor from Nova instead
(:mod:`iothrottle.conductor.instances`).
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
