"""Guarantees from flavor extra specs: the ``iothrottle:`` namespace.

An operator gives a flavor a guarantee with extra specs::

    openstack flavor set m1.large --property iothrottle:tier=gold \\
        --property iothrottle:min_iops=150

``iothrottle:tier`` names a tier stored by the conductor
(``iothrottle-manage tier create``); ``iothrottle:min_iops``,
``iothrottle:min_bytes_sec``, ``iothrottle:max_iops``,
``iothrottle:max_bytes_sec``, ``iothrottle:weight`` and
``iothrottle:min_memory_mb`` (the balloon floor, MiB) set one field of
:class:`iothrottle.controller.model.Guarantee` each and override the
tier's value of that field.  Values are plain ASCII decimal numbers
(``150``, ``0.5``, ``1e6``; no sign, spaces, ``_``, ``nan`` or ``inf``)
from 0 to :data:`iothrottle.tiers.MAX_VALUE` (1e15, QEMU's largest I/O
limit), a weight from :data:`~iothrottle.tiers.MIN_WEIGHT` to
:data:`~iothrottle.tiers.MAX_WEIGHT`, checked by the same functions as
the standalone tiers file (:mod:`iothrottle.tiers`).

Extra specs are untrusted input.  Every error is an
:class:`ExtraSpecError` (a ValueError) whose message is one line naming
the key, e.g. ``iothrottle:min_iops: must be a number >= 0, got 'abc'``.

nova-api sees one key at a time (:func:`check_spec`, called by
``iothrottle.nova.extra_spec_validators``); what takes more than one key
or the tiers - a floor above a ceiling, a tier that does not exist - only
:func:`guarantee_from_extra_specs` can check.  Nothing here does I/O.
"""

import dataclasses
import re
import typing

from iothrottle.controller import model
from iothrottle import tiers

PREFIX = 'iothrottle:'
TIER = PREFIX + 'tier'
# A tier name: what ``iothrottle-manage tier create`` accepts and what
# nova-api lets through for iothrottle:tier.
TIER_NAME_PATTERN = r'[A-Za-z0-9][A-Za-z0-9._-]{0,63}'
# Longest key an error message names as is (longer ones are cut).
_SHOWN_KEY_CHARS = 64


class ExtraSpecError(ValueError):
    """A flavor's ``iothrottle:`` extra specs are unusable (one line)."""


@dataclasses.dataclass(frozen=True)
class Spec:
    """One key of the namespace.

    ``parse`` turns the extra spec's value into what it means, or raises
    ValueError with a message that does not name the key.  ``field`` is
    the Guarantee field the key sets; '' for a key that is not part of
    the I/O guarantee (ignored by :func:`guarantee_from_extra_specs`).
    """
    name: str
    description: str
    parse: typing.Callable
    field: str = ''


def parse_tier_name(value):
    """``value`` if it is a well-formed tier name, else ValueError."""
    if not isinstance(value, str) or not re.fullmatch(TIER_NAME_PATTERN,
                                                      value):
        raise ValueError('must be a tier name (%s), got %s'
                         % (TIER_NAME_PATTERN, tiers.shown(value)))
    return value


def _parse_weight(value):
    weight = tiers.parse_number(value)
    tiers.check_weight(weight)
    return weight


SPECS = (
    Spec(TIER,
         'Guarantee tier of the flavor, a tier stored by the iothrottle '
         'conductor ("iothrottle-manage tier list"). The explicit '
         'iothrottle: keys override its values.',
         parse_tier_name),
    Spec(PREFIX + 'min_iops',
         'Minimum I/O operations per second guaranteed to each disk of '
         'the instance when its storage is contended; the controller '
         'never caps a disk below it. 0 means none.',
         tiers.parse_number, 'min_iops'),
    Spec(PREFIX + 'min_bytes_sec',
         'Minimum bytes per second guaranteed to each disk of the '
         'instance when its storage is contended. 0 means none.',
         tiers.parse_number, 'min_bytes_sec'),
    Spec(PREFIX + 'max_iops',
         'Static ceiling in I/O operations per second of each disk of '
         'the instance; must not be below iothrottle:min_iops. 0 means '
         'none.',
         tiers.parse_number, 'max_iops'),
    Spec(PREFIX + 'max_bytes_sec',
         'Static ceiling in bytes per second of each disk of the '
         'instance; must not be below iothrottle:min_bytes_sec. 0 means '
         'none.',
         tiers.parse_number, 'max_bytes_sec'),
    Spec(PREFIX + 'weight',
         'Share of spare capacity, relative to other instances, when '
         'the controller caps instances above their guarantees. A '
         'number > 0; default 1.',
         _parse_weight, 'weight'),
    Spec(PREFIX + 'min_memory_mb',
         'Least memory in MiB the iothrottle balloon agent leaves each '
         'instance when it reclaims memory; never above the flavor '
         'memory. 0 means the configured fraction of the flavor memory.',
         tiers.parse_number, 'min_memory_mb'),
)
SPECS_BY_NAME = {spec.name: spec for spec in SPECS}


def check_spec(name, value):
    """Check one extra spec on its own; return its parsed value.

    Raises ExtraSpecError naming ``name`` for a key of the namespace that
    does not exist or a value it does not accept.
    """
    spec = SPECS_BY_NAME.get(name)
    if spec is None:
        raise ExtraSpecError('%s: unknown key (expected one of %s)'
                             % (_shown_key(name),
                                ', '.join(SPECS_BY_NAME)))
    try:
        return spec.parse(value)
    except ValueError as exc:
        raise ExtraSpecError('%s: %s' % (name, exc)) from None


def _shown_key(name):
    if (isinstance(name, str) and len(name) <= _SHOWN_KEY_CHARS
            and name.isprintable()):
        return name
    return tiers.shown(name)


def own_specs(extra_specs):
    """The items of ``extra_specs`` in the ``iothrottle:`` namespace."""
    return {name: value for name, value in (extra_specs or {}).items()
            if isinstance(name, str) and name.startswith(PREFIX)}


def guarantee_from_extra_specs(extra_specs, known_tiers):
    """The Guarantee a flavor's extra specs give.

    ``extra_specs`` is the flavor's dict of extra specs (other namespaces
    are ignored); ``known_tiers`` maps tier names to their Guarantee.
    Returns NO_GUARANTEE when the flavor sets none of the guarantee keys.
    Raises ExtraSpecError (one line naming the key) for an unknown key of
    the namespace, a bad value, an unknown tier, or a floor above its
    ceiling.
    """
    parsed = {name: check_spec(name, value)
              for name, value in sorted(own_specs(extra_specs).items())}
    explicit = {SPECS_BY_NAME[name].field: value
                for name, value in parsed.items()
                if SPECS_BY_NAME[name].field}
    tier = parsed.get(TIER, '')
    if not tier and not explicit:
        return model.NO_GUARANTEE
    values = {}
    if tier:
        if tier not in known_tiers:
            raise ExtraSpecError('%s: unknown tier %r (known: %s)'
                                 % (TIER, tier, tiers.listed(known_tiers)))
        values = dataclasses.asdict(known_tiers[tier])
        values.pop('tier', None)
    values.update(explicit)
    for floor, low, ceiling, high in tiers.floors_above_ceilings(values):
        if floor in explicit:
            raise ExtraSpecError('%s%s (%g) exceeds %s'
                                 % (PREFIX, floor, low,
                                    _source(ceiling, high, explicit, tier)))
        raise ExtraSpecError('%s%s (%g) is below %s'
                             % (PREFIX, ceiling, high,
                                _source(floor, low, explicit, tier)))
    try:
        return model.Guarantee(tier=tier, **values)
    except ValueError as exc:
        # Unreachable while the checks above match Guarantee's own.
        raise ExtraSpecError('%s: %s' % (PREFIX.rstrip(':'), exc)) from None


def _source(field, value, explicit, tier):
    """How a message names where a guarantee field's value came from."""
    if field in explicit:
        return '%s%s (%g)' % (PREFIX, field, value)
    return '%s of tier %r (%g)' % (field, tier, value)
