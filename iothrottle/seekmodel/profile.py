"""Device profiles as JSON: load, dump, validate.

A profile is what calibration (``iothrottle-calibrate``) measured of one
device, and what ``iothrottle.seekmodel.model.predict`` needs.  Two
kinds; every size in bytes, every rate per second::

    {"kind": "hdd",
     "name": "WD1600JS",
     "request_size_bytes": 4096,
     "distance_curve": {"kind": "table",
                        "points": [[distance_bytes, bandwidth_bytes_sec],
                                   ...]},
     "alpha_by_scheduler": {"mq-deadline": 0.1, "bfq": 0.95},
     "description": "free text",
     "calibration": {...}}

``distance_curve`` may instead be ``{"kind": "inverse_linear",
"a_sec_per_byte2": a, "b_sec_per_byte": b}`` (seed 003's
``1/f(l) = a l + b``).  ::

    {"kind": "flash",
     "name": "NVMe, seed 002",
     "request_size_bytes": 4096,
     "read_qd_curve": [[outstanding_requests, iops], ...],
     "write_qd_curve": [[outstanding_requests, iops], ...],
     "read_bytes_sec_limit": null,
     "write_bytes_sec_limit": null}

``description`` (a string) and ``calibration`` (an object: what was
measured, where, how) are optional, kept on dump and not interpreted.
Anything else is refused, as is any value the model would refuse: each
error is a ``ValueError`` with a one-line message that starts with the
field, e.g. ``distance_curve: points[2]: bandwidth must not increase
with distance (...)``.

Profiles are untrusted input: they come from operators' files and over
RPC from the conductor (``iothrottle.rpc.wire``).  Every number is
bounded (``MAX_REQUEST_BYTES``, ``MAX_DISTANCE_BYTES``, ``MIN_BYTES_SEC``
to ``MAX_BYTES_SEC``, ``MIN_IOPS`` to ``MAX_IOPS``,
``MAX_OUTSTANDING_REQUESTS``, ``MAX_SEC_PER_BYTE``), so every prediction
from an accepted profile is finite; curves hold at most
``MAX_CURVE_POINTS``, strings and ``calibration`` are length-limited and
a file is at most ``MAX_FILE_BYTES`` of UTF-8.
"""

import json
import math
import re

from iothrottle.seekmodel import model

FREE_FIELDS = ('description', 'calibration')
HDD_FIELDS = ('kind', 'name', 'request_size_bytes', 'distance_curve',
              'alpha_by_scheduler') + FREE_FIELDS
FLASH_FIELDS = ('kind', 'name', 'request_size_bytes', 'read_qd_curve',
                'write_qd_curve', 'read_bytes_sec_limit',
                'write_bytes_sec_limit') + FREE_FIELDS
CURVE_KINDS = (model.DistanceTable.kind, model.InverseLinearCurve.kind)

# A [x, y] pair that json.dumps(indent=2) spread over four lines.
_PAIR = re.compile(r'\[\s+([-+.\deE]+),\s+([-+.\deE]+)\s+\]')

# The size seed 003 and seed 002 both measured with, and the block size
# of most filesystems: a profile that does not say is a 4 KiB profile.
DEFAULT_REQUEST_BYTES = 4096

# Bounds of every number a profile holds.  Profiles come from files and
# over RPC from the conductor; a value outside them is a broken
# calibration or a forged message, and inside them every prediction
# (sums, products and reciprocals of these) stays finite.
# Largest request: above any block layer's max_hw_sectors_kb.
MAX_REQUEST_BYTES = 1 << 30
# Largest seek distance or position: 1 EiB, above any block device.
MAX_DISTANCE_BYTES = float(1 << 60)
# Bandwidth range: below 1 B/s a device is dead, not slow; 10 TB/s is
# 100 times the fastest PCIe 5 x16 device.
MIN_BYTES_SEC = 1.0
MAX_BYTES_SEC = 1e13
# IOPS range: one request per 1000 s to 1000 times the fastest NVMe.
MIN_IOPS = 1e-3
MAX_IOPS = 1e9
# Deepest queue: NVMe's 65535 queues of 65536 entries each.
MAX_OUTSTANDING_REQUESTS = 65535.0 * 65536
# Seconds per byte (per byte of distance for ``a``): 1 s per byte is
# MIN_BYTES_SEC, the slowest device a profile may describe.
MAX_SEC_PER_BYTE = 1.0
# A curve of more points is not a calibration (iothrottle-calibrate
# measures tens); the bound keeps interpolation cheap.
MAX_CURVE_POINTS = 1024
# Longest name and description, in characters.
MAX_NAME_CHARS = 255
MAX_DESCRIPTION_CHARS = 4096
# Largest ``calibration`` object, as JSON characters: it travels in
# every pool_state reply.
MAX_CALIBRATION_CHARS = 64 * 1024
# Largest profile file read: a real one is a few KiB.
MAX_FILE_BYTES = 1024 * 1024


def _require_object(where, value):
    if not isinstance(value, dict):
        raise ValueError('%s: must be a JSON object, got %s'
                         % (where, type(value).__name__))


def _check_fields(where, doc, allowed, required):
    for key in doc:
        if key not in allowed:
            raise ValueError('%s: unknown field (allowed: %s)'
                             % ('%s.%s' % (where, key) if where else key,
                                ', '.join(allowed)))
    for key in required:
        if key not in doc:
            raise ValueError('%s: missing' % (
                '%s.%s' % (where, key) if where else key))


def _bounded(where, value, low, high, strict=False):
    """Reject ``value`` unless it is a number in [low, high] ((low, high]
    if ``strict``); compares before any float conversion, so an integer
    too large for a float is refused, not an OverflowError."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and math.isnan(value))
            or value < low or value > high or (strict and value == low)):
        raise ValueError('%s must be a number in %s%g, %g], got %s'
                         % (where, '(' if strict else '[', low, high,
                            _shown(value)))
    return value


def _shown(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + '...'


def _string(where, value, limit):
    if not isinstance(value, str):
        raise ValueError('%s: must be a string' % where)
    if len(value) > limit:
        raise ValueError('%s: longer than %d characters' % (where, limit))
    return value


def _curve_points(owner, points, x_name, x_range, y_name, y_range):
    """Bound the numbers of a curve's points; the model checks the rest
    of their shape."""
    pairs = '[%s, %s] pairs' % (x_name, y_name)
    if not isinstance(points, list):
        raise ValueError('%s must be a list of %s' % (owner, pairs))
    if len(points) > MAX_CURVE_POINTS:
        raise ValueError('%s must be at most %d %s'
                         % (owner, MAX_CURVE_POINTS, pairs))
    for k, point in enumerate(points):
        if isinstance(point, (list, tuple)) and len(point) == 2:
            where = '%s: points[%d]: ' % (owner.split(':')[0], k)
            _bounded(where + x_name, point[0], *x_range)
            _bounded(where + y_name, point[1], *y_range)
    return points


def _distance_curve(doc):
    _require_object('distance_curve', doc)
    kind = doc.get('kind')
    if kind == model.DistanceTable.kind:
        _check_fields('distance_curve', doc, ('kind', 'points'),
                      ('points',))
        points = _curve_points(
            'distance_curve: points', doc['points'],
            'distance_bytes', (0.0, MAX_DISTANCE_BYTES),
            'bandwidth_bytes_sec', (MIN_BYTES_SEC, MAX_BYTES_SEC))
        return model.DistanceTable(points=points)
    if kind == model.InverseLinearCurve.kind:
        fields = ('a_sec_per_byte2', 'b_sec_per_byte')
        _check_fields('distance_curve', doc, ('kind',) + fields, fields)
        _bounded('distance_curve.a_sec_per_byte2', doc['a_sec_per_byte2'],
                 0.0, MAX_SEC_PER_BYTE)
        _bounded('distance_curve.b_sec_per_byte', doc['b_sec_per_byte'],
                 1.0 / MAX_BYTES_SEC, MAX_SEC_PER_BYTE)
        return model.InverseLinearCurve(**{f: doc[f] for f in fields})
    raise ValueError('distance_curve: kind: unknown curve kind %s '
                     '(known: %s)' % (_shown(kind), ', '.join(CURVE_KINDS)))


def _qd_curve(name, points):
    points = _curve_points('%s:' % name, points, 'outstanding_requests',
                           (0.0, MAX_OUTSTANDING_REQUESTS, True),
                           'iops', (MIN_IOPS, MAX_IOPS))
    return model.QdCurve(points=points, name=name)


def _bytes_sec_limit(doc, name):
    value = doc.get(name)
    if value is not None:
        _bounded(name, value, MIN_BYTES_SEC, MAX_BYTES_SEC)
    return value


def from_dict(doc):
    """The profile (``HddProfile`` or ``FlashProfile``) ``doc`` holds."""
    _require_object('profile', doc)
    kind = doc.get('kind')
    if not isinstance(kind, str) or kind not in (model.HDD, model.FLASH):
        raise ValueError('kind: unknown kind %s (known: %s, %s)'
                         % (_shown(kind), model.HDD, model.FLASH))
    _string('name', doc.get('name', ''), MAX_NAME_CHARS)
    _string('description', doc.get('description', ''),
            MAX_DESCRIPTION_CHARS)
    if 'calibration' in doc:
        _calibration(doc['calibration'])
    size = _bounded('request_size_bytes',
                    doc.get('request_size_bytes', DEFAULT_REQUEST_BYTES),
                    0, MAX_REQUEST_BYTES, strict=True)
    if kind == model.HDD:
        _check_fields('', doc, HDD_FIELDS, ('distance_curve',))
        alphas = doc.get('alpha_by_scheduler', {})
        _require_object('alpha_by_scheduler', alphas)
        profile = model.HddProfile(
            name=doc.get('name', ''),
            distance_curve=_distance_curve(doc['distance_curve']),
            alpha_by_scheduler=alphas, request_size_bytes=size)
    else:
        _check_fields('', doc, FLASH_FIELDS,
                      ('read_qd_curve', 'write_qd_curve'))
        profile = model.FlashProfile(
            name=doc.get('name', ''),
            read_qd_curve=_qd_curve('read_qd_curve', doc['read_qd_curve']),
            write_qd_curve=_qd_curve('write_qd_curve',
                                     doc['write_qd_curve']),
            request_size_bytes=size,
            read_bytes_sec_limit=_bytes_sec_limit(doc, 'read_bytes_sec_limit'),
            write_bytes_sec_limit=_bytes_sec_limit(doc,
                                                   'write_bytes_sec_limit'))
    return profile


def _calibration(value):
    """The free ``calibration`` object: a JSON object, bounded in size."""
    _require_object('calibration', value)
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        raise ValueError('calibration: must be plain JSON') from None
    if len(text) > MAX_CALIBRATION_CHARS:
        raise ValueError('calibration: larger than %d characters of JSON'
                         % MAX_CALIBRATION_CHARS)


def to_dict(profile, description='', calibration=None):
    """The JSON document of ``profile`` (``from_dict``'s inverse)."""
    doc = {'kind': profile.kind, 'name': profile.name,
           'request_size_bytes': profile.request_size_bytes}
    if profile.kind == model.HDD:
        curve = profile.distance_curve
        if curve.kind == model.DistanceTable.kind:
            doc['distance_curve'] = {
                'kind': curve.kind,
                'points': [list(p) for p in curve.points]}
        else:
            doc['distance_curve'] = {
                'kind': curve.kind,
                'a_sec_per_byte2': curve.a_sec_per_byte2,
                'b_sec_per_byte': curve.b_sec_per_byte}
        doc['alpha_by_scheduler'] = profile.alphas()
    else:
        doc['read_qd_curve'] = [list(p) for p in profile.read_qd_curve.points]
        doc['write_qd_curve'] = [list(p)
                                 for p in profile.write_qd_curve.points]
        doc['read_bytes_sec_limit'] = profile.read_bytes_sec_limit
        doc['write_bytes_sec_limit'] = profile.write_bytes_sec_limit
    if description:
        doc['description'] = description
    if calibration is not None:
        doc['calibration'] = calibration
    return doc


def loads(text):
    """Parse and validate a profile from JSON text."""
    if len(text) > MAX_FILE_BYTES:
        raise ValueError('profile: larger than %d bytes' % MAX_FILE_BYTES)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        # RecursionError: arrays nested deeper than the stack.
        raise ValueError('profile: not valid JSON: %s'
                         % (str(e).splitlines() or [type(e).__name__])[0]
                         ) from None
    return from_dict(doc)


def load(path):
    """Read and validate the profile at ``path``; errors start with the
    path.  ``OSError`` if it cannot be read."""
    with open(path, 'rb') as f:
        data = f.read(MAX_FILE_BYTES + 1)
    try:
        return loads(data.decode('utf-8'))
    except UnicodeDecodeError as e:
        raise ValueError('%s: not UTF-8 text (byte %d)'
                         % (path, e.start)) from None
    except ValueError as e:
        raise ValueError('%s: %s' % (path, e)) from None


def dumps(profile, description='', calibration=None):
    """JSON text of ``profile``, one curve point a line."""
    text = json.dumps(to_dict(profile, description, calibration),
                      indent=2, sort_keys=True)
    return _PAIR.sub(r'[\1, \2]', text) + '\n'


def dump(profile, path, description='', calibration=None):
    """Write ``profile`` as JSON to ``path``."""
    with open(path, 'w') as f:
        f.write(dumps(profile, description, calibration))
