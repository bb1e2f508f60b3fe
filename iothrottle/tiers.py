"""The standalone guarantees file: tiers and which flavor gets which.

Without a conductor, the compute agent learns each instance's guarantee
from a YAML file::

    tiers:
      gold:   {min_iops: 100, min_bytes_sec: 6553600, weight: 4}
      silver: {min_iops: 40, max_iops: 400, weight: 2}
    flavors:
      m1.large: gold
      bench.vm2: {min_bytes_sec: 819200, tier: silver}
      db.large: {min_memory_mb: 2048, tier: gold}
    default_tier: silver

A flavor maps to a tier name, or to a mapping of guarantee keys with an
optional ``tier`` whose keys it overrides.  ``default_tier`` (optional)
covers flavors the file does not list.  ``min_memory_mb`` is not an I/O
key: the balloon floor of the flavor's instances in MiB (0: ``[balloon]
floor_fraction`` of their memory; see :meth:`Tiers.memory_floors`).
:func:`load_tiers` validates the whole file up front; every error is one
line naming the file and the culprit, e.g. ``tiers.yaml:
flavors.bench.vm2.min_iops: must be a number >= 0, got 'abc'``.
"""

import dataclasses
import math

import yaml

from iothrottle.controller import model

# Keys a tier or a flavor entry may set; the fields of model.Guarantee.
GUARANTEE_KEYS = ('min_iops', 'min_bytes_sec', 'max_iops', 'max_bytes_sec',
                  'weight', 'min_memory_mb')
_TOP_KEYS = ('tiers', 'flavors', 'default_tier')


class TiersError(ValueError):
    """The guarantees file is unusable; the message is one line."""


# The value checks of one guarantee, shared with every other source of
# guarantee keys (flavor extra specs, tiers in the database): each raises
# ValueError with a one-line message that does not name the key, for the
# caller to prefix with wherever the value came from.

# Floors and the ceiling each may not exceed (a ceiling of 0 is none).
FLOOR_CEILINGS = (('min_iops', 'max_iops'),
                  ('min_bytes_sec', 'max_bytes_sec'))


def parse_number(value):
    """``value`` as a float if it is a finite number >= 0 or a string of
    one (YAML 1.1 reads "1e6", with no dot, as a string)."""
    number = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
    if (isinstance(number, bool) or not isinstance(number, (int, float))
            or not math.isfinite(number) or number < 0):
        raise ValueError('must be a number >= 0, got %r' % (value,))
    return float(number)


def check_weight(weight):
    """A weight shares spare capacity: it must be > 0."""
    if weight <= 0:
        raise ValueError('must be > 0, got %g' % weight)


def floors_above_ceilings(values):
    """``(floor, low, ceiling, high)`` for each floor of ``values`` (parsed
    numbers by GUARANTEE_KEYS name, absent ones 0) above a set ceiling."""
    found = []
    for floor, ceiling in FLOOR_CEILINGS:
        low, high = values.get(floor, 0), values.get(ceiling, 0)
        if 0 < high < low:
            found.append((floor, low, ceiling, high))
    return found


@dataclasses.dataclass(frozen=True)
class Tiers:
    """Guarantees by flavor name, as loaded from a tiers file."""
    tiers: dict
    flavors: dict
    default_tier: str = ''

    def covers(self, flavor):
        """Whether ``flavor`` gets a guarantee (listed, or a default)."""
        return flavor in self.flavors or bool(self.default_tier)

    def guarantee_for(self, flavor):
        """The Guarantee of ``flavor``; NO_GUARANTEE if not covered."""
        if flavor in self.flavors:
            return self.flavors[flavor]
        if self.default_tier:
            return self.tiers[self.default_tier]
        return model.NO_GUARANTEE

    def memory_floors(self):
        """Balloon floors, {flavor: MiB}, of the flavors the file lists
        whose guarantee sets ``min_memory_mb`` (their own or their
        tier's).  Other flavors, those covered only by ``default_tier``
        too, get the ``[balloon] floor_fraction`` of their memory."""
        return {flavor: guarantee.min_memory_mb
                for flavor, guarantee in sorted(self.flavors.items())
                if guarantee.min_memory_mb > 0}


def load_tiers(path):
    """Read and validate the tiers file at ``path``; raises TiersError."""
    try:
        with open(path) as stream:
            text = stream.read()
    except OSError as exc:
        raise TiersError('%s: cannot read: %s'
                         % (path, exc.strerror or exc)) from None
    return parse_tiers(text, path)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (plain
    PyYAML keeps the last one silently: a typo'd tier would vanish)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, 'duplicate key %r' % (key,),
                    key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_tiers(text, source='tiers file'):
    """Validate YAML ``text``; ``source`` names it in error messages."""
    try:
        # A SafeLoader subclass: no arbitrary Python objects.
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = (' at line %d column %d' % (mark.line + 1, mark.column + 1)
                 if mark is not None else '')
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise TiersError('%s: malformed YAML%s: %s'
                         % (source, where, problem)) from None
    return _Parser(source).document(document)


class _Parser:
    """Walks the parsed YAML, naming the path of whatever is wrong."""

    def __init__(self, source):
        self.source = source

    def fail(self, where, message):
        prefix = '%s: %s: ' % (self.source, where) if where else (
            '%s: ' % self.source)
        raise TiersError(prefix + message)

    def mapping(self, where, value, allowed):
        if not isinstance(value, dict):
            self.fail(where, 'must be a mapping, got %r' % (value,))
        for key in value:
            if key not in allowed:
                self.fail(_join(where, str(key)),
                          'unknown key (expected one of %s)'
                          % ', '.join(allowed))
        return value

    def number(self, where, value):
        try:
            return parse_number(value)
        except ValueError as exc:
            self.fail(where, str(exc))

    def guarantee(self, where, entry, tier='', base=None):
        values = dataclasses.asdict(base) if base is not None else {}
        values.pop('tier', None)
        for key in GUARANTEE_KEYS:
            if key in entry:
                values[key] = self.number(_join(where, key), entry[key])
        try:
            check_weight(values.get('weight', 1.0))
        except ValueError as exc:
            self.fail(_join(where, 'weight'), str(exc))
        for floor, low, ceiling, high in floors_above_ceilings(values):
            self.fail(where, '%s (%g) exceeds %s (%g)'
                      % (floor, low, ceiling, high))
        try:
            return model.Guarantee(tier=tier, **values)
        except ValueError as exc:
            self.fail(where, str(exc))

    def tier_name(self, where, value, tiers):
        if not isinstance(value, str) or value not in tiers:
            self.fail(where, 'unknown tier %r (known: %s)'
                      % (value, ', '.join(sorted(tiers)) or 'none'))
        return value

    def document(self, document):
        if document is None:
            self.fail('', "empty file, expected 'tiers' and 'flavors'")
        self.mapping('', document, _TOP_KEYS)
        tiers = {}
        raw_tiers = document.get('tiers') or {}
        self.mapping('tiers', raw_tiers, tuple(raw_tiers))
        for name, entry in raw_tiers.items():
            where = _join('tiers', str(name))
            entry = self.mapping(where, entry, GUARANTEE_KEYS)
            tiers[str(name)] = self.guarantee(where, entry, tier=str(name))
        flavors = {}
        raw_flavors = document.get('flavors') or {}
        self.mapping('flavors', raw_flavors, tuple(raw_flavors))
        for name, entry in raw_flavors.items():
            where = _join('flavors', str(name))
            if isinstance(entry, dict):
                entry = self.mapping(where, entry,
                                     GUARANTEE_KEYS + ('tier',))
                tier = ''
                if 'tier' in entry:
                    tier = self.tier_name(_join(where, 'tier'),
                                          entry['tier'], tiers)
                flavors[str(name)] = self.guarantee(
                    where, entry, tier=tier,
                    base=tiers[tier] if tier else None)
            else:
                flavors[str(name)] = tiers[self.tier_name(where, entry,
                                                          tiers)]
        default_tier = document.get('default_tier') or ''
        if default_tier:
            self.tier_name('default_tier', default_tier, tiers)
        return Tiers(tiers=tiers, flavors=flavors,
                     default_tier=default_tier)


def _join(where, key):
    return '%s.%s' % (where, key) if where else key
