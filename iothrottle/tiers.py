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

Every number is bounded: 0 to ``MAX_VALUE`` (1e15), a weight
``MIN_WEIGHT`` to ``MAX_WEIGHT`` (0.001 to 1000).  Tier and flavor names
are printable strings of at most ``MAX_NAME_CHARS`` (an integer key,
``123:``, is its text); the file is at most ``MAX_FILE_BYTES`` (1 MiB)
of UTF-8.  The file is the operator's, but a bad one must still end in
a clear error, never a crash of the service that loads it.
"""

import dataclasses
import math
import re
import reprlib

import yaml

from iothrottle.controller import model

# Keys a tier or a flavor entry may set; the fields of model.Guarantee.
GUARANTEE_KEYS = ('min_iops', 'min_bytes_sec', 'max_iops', 'max_bytes_sec',
                  'weight', 'min_memory_mb')
_TOP_KEYS = ('tiers', 'flavors', 'default_tier')

# Largest value of any guarantee number (IOPS, bytes/s, MiB): QEMU's
# THROTTLE_VALUE_MAX, above which it refuses an I/O limit; anything
# larger is a typo, and bounded values keep every sum of them finite.
MAX_VALUE = 1e15
# Weights share spare capacity by ratio; a million to one between two
# instances is beyond any useful tiering, and the bounds keep
# excess / weight finite for every value up to MAX_VALUE.
MIN_WEIGHT = 1e-3
MAX_WEIGHT = 1e3
# A number as text: plain ASCII decimal, optional fraction and exponent
# (no sign, no spaces, no '_', no 'nan'/'inf', no non-ASCII digits that
# float() would also take).
_NUMBER_TEXT = re.compile(r'(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?')
# Longest number text accepted (a double needs 17 significant digits).
_MAX_NUMBER_CHARS = 64
# Largest tiers file read: a real one is a few KiB; a larger one is not
# a tiers file, and YAML parsing time grows with it.
MAX_FILE_BYTES = 1024 * 1024
# Longest tier or flavor name (Nova's flavor name limit is 255).
MAX_NAME_CHARS = 255
# How many names an "unknown tier" message lists.
_SHOWN_NAMES = 10
# How long a value quoted in an error message may get.
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 60
_SHOWN.maxlevel = 1


def shown(value):
    """``value`` quoted for a one-line message, bounded in length."""
    return _SHOWN.repr(value)


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
    """``value`` as a float if it is a number in [0, MAX_VALUE] or a
    string of one in plain decimal (YAML 1.1 reads "1e6", with no dot,
    as a string)."""
    number = value
    if isinstance(value, str):
        if (len(value) <= _MAX_NUMBER_CHARS
                and _NUMBER_TEXT.fullmatch(value)):
            number = float(value)
    if (isinstance(number, bool) or not isinstance(number, (int, float))
            or (isinstance(number, float) and math.isnan(number))
            or number < 0):
        raise ValueError('must be a number >= 0, got %s' % shown(value))
    if number > MAX_VALUE:
        raise ValueError('must be at most %g, got %s'
                         % (MAX_VALUE, shown(value)))
    return float(number)


def check_weight(weight):
    """A weight shares spare capacity: in [MIN_WEIGHT, MAX_WEIGHT]."""
    if weight <= 0:
        raise ValueError('must be > 0, got %g' % weight)
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        raise ValueError('must be in [%g, %g], got %g'
                         % (MIN_WEIGHT, MAX_WEIGHT, weight))


def floors_above_ceilings(values):
    """``(floor, low, ceiling, high)`` for each floor of ``values`` (parsed
    numbers by GUARANTEE_KEYS name, absent ones 0) above a set ceiling."""
    found = []
    for floor, ceiling in FLOOR_CEILINGS:
        low, high = values.get(floor, 0), values.get(ceiling, 0)
        if 0 < high < low:
            found.append((floor, low, ceiling, high))
    return found


def parse_guarantee(values, tier='', name_of=str):
    """The Guarantee of tier ``tier`` from ``values`` (raw numbers or
    strings of them by GUARANTEE_KEYS name; absent keys take
    Guarantee's defaults), checked as flavor extra specs are: every
    number in [0, MAX_VALUE], the weight in [MIN_WEIGHT, MAX_WEIGHT], no
    floor above its ceiling.  ValueError (one line) starting with
    ``name_of(key)``, how the caller names the culprit (an option, a
    JSON field)."""
    numbers = {}
    for key in GUARANTEE_KEYS:
        if key in values:
            try:
                numbers[key] = parse_number(values[key])
            except ValueError as exc:
                raise ValueError('%s: %s' % (name_of(key), exc)) from None
    try:
        check_weight(numbers.get('weight', 1.0))
    except ValueError as exc:
        raise ValueError('%s: %s' % (name_of('weight'), exc)) from None
    for floor, low, ceiling, high in floors_above_ceilings(numbers):
        raise ValueError('%s (%g) exceeds %s (%g)'
                         % (name_of(floor), low, name_of(ceiling), high))
    return model.Guarantee(tier=tier, **numbers)


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
        with open(path, 'rb') as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TiersError('%s: cannot read: %s'
                         % (path, exc.strerror or exc)) from None
    if len(data) > MAX_FILE_BYTES:
        raise TiersError('%s: larger than %d bytes, not a tiers file'
                         % (path, MAX_FILE_BYTES))
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise TiersError('%s: not UTF-8 text (byte %d)'
                         % (path, exc.start)) from None
    return parse_tiers(text, path)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (plain
    PyYAML keeps the last one silently: a typo'd tier would vanish)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, 'a key must be a name, got a %s'
                    % type(key).__name__, key_node.start_mark) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, 'duplicate key %r' % (key,),
                    key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_tiers(text, source='tiers file'):
    """Validate YAML ``text``; ``source`` names it in error messages."""
    if len(text) > MAX_FILE_BYTES:
        raise TiersError('%s: larger than %d bytes, not a tiers file'
                         % (source, MAX_FILE_BYTES))
    try:
        # A SafeLoader subclass: no arbitrary Python objects.
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = (' at line %d column %d' % (mark.line + 1, mark.column + 1)
                 if mark is not None else '')
        problem = getattr(exc, 'problem', None) or str(exc)
        raise TiersError('%s: malformed YAML%s: %s'
                         % (source, where, _one_line(problem))) from None
    except (ValueError, RecursionError) as exc:
        # PyYAML's own constructors: an integer of more digits than
        # Python converts (ValueError), nesting deeper than the stack.
        raise TiersError('%s: malformed YAML: %s'
                         % (source, _one_line(str(exc) or type(exc).__name__))
                         ) from None
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
            self.fail(where, 'must be a mapping, got %s' % shown(value))
        for key in value:
            if key not in allowed:
                self.fail(_join(where, _key_text(key)),
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
            self.fail(where, 'unknown tier %s (known: %s)'
                      % (shown(value), listed(tiers)))
        return value

    def name(self, where, key, seen):
        """A tier or flavor name: a non-empty string, length-limited (an
        integer, as YAML reads ``123:``, is taken as its text), not in
        ``seen`` already."""
        if isinstance(key, int) and not isinstance(key, bool):
            key = str(key)
        if not isinstance(key, str) or not key.strip() or (
                len(key) > MAX_NAME_CHARS) or not key.isprintable():
            self.fail(_join(where, _key_text(key)),
                      'must be a name of 1 to %d printable characters'
                      % MAX_NAME_CHARS)
        if key in seen:
            self.fail(_join(where, key), 'given twice')
        return key

    def entries(self, document, key):
        """The mapping at top-level ``key`` ({} if absent or empty)."""
        raw = document.get(key)
        if raw is None:
            return {}
        self.mapping(key, raw, tuple(raw) if isinstance(raw, dict) else ())
        return raw

    def document(self, document):
        if document is None:
            self.fail('', "empty file, expected 'tiers' and 'flavors'")
        self.mapping('', document, _TOP_KEYS)
        tiers = {}
        for name, entry in self.entries(document, 'tiers').items():
            name = self.name('tiers', name, tiers)
            where = _join('tiers', name)
            entry = self.mapping(where, entry, GUARANTEE_KEYS)
            tiers[name] = self.guarantee(where, entry, tier=name)
        flavors = {}
        for name, entry in self.entries(document, 'flavors').items():
            name = self.name('flavors', name, flavors)
            where = _join('flavors', name)
            if isinstance(entry, dict):
                entry = self.mapping(where, entry,
                                     GUARANTEE_KEYS + ('tier',))
                tier = ''
                if 'tier' in entry:
                    tier = self.tier_name(_join(where, 'tier'),
                                          entry['tier'], tiers)
                flavors[name] = self.guarantee(
                    where, entry, tier=tier,
                    base=tiers[tier] if tier else None)
            else:
                flavors[name] = tiers[self.tier_name(where, entry, tiers)]
        default_tier = document.get('default_tier')
        if default_tier is None or default_tier == '':
            default_tier = ''
        else:
            self.tier_name('default_tier', default_tier, tiers)
        return Tiers(tiers=tiers, flavors=flavors,
                     default_tier=default_tier)


def _join(where, key):
    return '%s.%s' % (where, key) if where else key


def _key_text(key):
    """A mapping key as a message names it: as is if it is a short
    printable string, else quoted and bounded."""
    if isinstance(key, str) and len(key) <= MAX_NAME_CHARS and (
            key.isprintable()):
        return key
    return shown(key)


def listed(names):
    """Up to _SHOWN_NAMES ``names``, sorted, for a one-line message."""
    names = sorted(_key_text(name) for name in names)
    text = ', '.join(names[:_SHOWN_NAMES]) or 'none'
    return text + (', ...' if len(names) > _SHOWN_NAMES else '')


def _one_line(text):
    """The first line of ``text``, bounded in length."""
    lines = str(text).splitlines() or ['']
    return lines[0][:200]
