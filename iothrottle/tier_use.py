"""Deleting a tier while something uses it: one code path for
``DELETE /tiers/{name}`` and ``iothrottle-manage tier delete``.

A tier is in use while

* a flavor in Nova names it (``iothrottle:tier``, any flavor, public or
  private, with or without instances): an operator deleting the tier
  would make that flavor invalid, and every instance created from it
  later would have no guarantee;
* an instance the conductor recorded has a flavor that named it when
  Nova last listed its host (table ``instances``): its guarantee would
  vanish at the next refresh.

Nova is asked only where the service has its credentials (``[nova]``
with an ``auth_type``, as the conductor and the API have them under
devstack); without them only the recorded instances are checked, and
the refusal says so.  A Nova that fails makes the delete fail
(:class:`NovaUnavailable`) rather than pass unchecked.  ``force``
deletes without asking Nova and whatever uses the tier.
"""

from iothrottle.db import api
from iothrottle import extra_specs

# Flavors asked of Nova per request: Nova's own default maximum page
# ([api] max_limit = 1000), so each page is full until the last.
FLAVOR_PAGE = 1000

NOT_CHECKED = ('Nova\'s flavors not checked: no [nova] credentials in '
               'this service\'s configuration')


class NovaUnavailable(Exception):
    """Nova could not be asked; the message is one line."""


def _specs(flavor):
    """A flavor's extra specs: in the listing from Nova API 2.61 on,
    else one request of their own."""
    specs = getattr(flavor, 'extra_specs', None)
    if not isinstance(specs, dict):
        specs = flavor.get_keys()
    return specs


def flavors_naming(client, name):
    """'flavor-name (flavor-id)' of every flavor of novaclient
    ``client`` whose ``iothrottle:tier`` is ``name``, paging through
    Nova's flavor list (public and private)."""
    found, marker = [], None
    while True:
        page = client.flavors.list(detailed=True, is_public=None,
                                   marker=marker, limit=FLAVOR_PAGE)
        for flavor in page:
            if _specs(flavor).get(extra_specs.TIER) == name:
                found.append('%s (%s)' % (flavor.name, flavor.id))
        if not page:
            return found
        marker = page[-1].id


def delete_tier(engine, name, nova=None, force=False):
    """Delete tier ``name``.

    ``nova``: a function returning a novaclient Client, or None when
    this service has no Nova credentials.  Raises api.NotFound,
    api.InUse (its message names the flavors and instances, and says
    when Nova was not asked) or NovaUnavailable.  Returns the warning
    the deletion deserves ('' for none) for the caller to show: the
    operator's command prints it, the API logs it.
    """
    flavors = ()
    if nova is not None and not force:
        try:
            flavors = flavors_naming(nova(), name)
        except Exception as exc:
            raise NovaUnavailable(
                'cannot list Nova\'s flavors to check that none names tier '
                '%r: %s' % (name, (str(exc).splitlines()
                                   or [type(exc).__name__])[0][:200])
            ) from None
    try:
        shown, count = api.delete_tier(engine, name, flavors, force)
    except api.InUse as exc:
        if nova is None:
            raise api.InUse('%s (%s)' % (exc, NOT_CHECKED)) from None
        raise
    if force and count:
        return ('tier %s deleted by force while %d recorded instance(s) '
                'used it: %s' % (name, count, ', '.join(shown)))
    if nova is None:
        return 'tier %s deleted; %s' % (name, NOT_CHECKED)
    return ''
