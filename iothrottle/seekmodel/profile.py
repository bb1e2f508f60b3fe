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
"""

import json
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


def _distance_curve(doc):
    _require_object('distance_curve', doc)
    kind = doc.get('kind')
    if kind == model.DistanceTable.kind:
        _check_fields('distance_curve', doc, ('kind', 'points'),
                      ('points',))
        if not isinstance(doc['points'], list):
            raise ValueError('distance_curve: points must be a list of '
                             '[distance_bytes, bandwidth_bytes_sec] pairs')
        return model.DistanceTable(points=doc['points'])
    if kind == model.InverseLinearCurve.kind:
        fields = ('a_sec_per_byte2', 'b_sec_per_byte')
        _check_fields('distance_curve', doc, ('kind',) + fields, fields)
        return model.InverseLinearCurve(**{f: doc[f] for f in fields})
    raise ValueError('distance_curve: kind: unknown curve kind %r '
                     '(known: %s)' % (kind, ', '.join(CURVE_KINDS)))


def _qd_curve(name, points):
    if not isinstance(points, list):
        raise ValueError('%s: must be a list of [outstanding_requests, '
                         'iops] pairs' % name)
    return model.QdCurve(points=points, name=name)


def from_dict(doc):
    """The profile (``HddProfile`` or ``FlashProfile``) ``doc`` holds."""
    _require_object('profile', doc)
    kind = doc.get('kind')
    if kind not in (model.HDD, model.FLASH):
        raise ValueError('kind: unknown kind %r (known: %s, %s)'
                         % (kind, model.HDD, model.FLASH))
    if not isinstance(doc.get('name', ''), str):
        raise ValueError('name: must be a string')
    if not isinstance(doc.get('description', ''), str):
        raise ValueError('description: must be a string')
    if 'calibration' in doc:
        _require_object('calibration', doc['calibration'])
    size = doc.get('request_size_bytes', DEFAULT_REQUEST_BYTES)
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
            read_bytes_sec_limit=doc.get('read_bytes_sec_limit'),
            write_bytes_sec_limit=doc.get('write_bytes_sec_limit'))
    return profile


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
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError('profile: not valid JSON: %s' % e)
    return from_dict(doc)


def load(path):
    """Read and validate the profile at ``path``; errors start with the
    path.  ``OSError`` if it cannot be read."""
    with open(path) as f:
        text = f.read()
    try:
        return loads(text)
    except ValueError as e:
        raise ValueError('%s: %s' % (path, e))


def dumps(profile, description='', calibration=None):
    """JSON text of ``profile``, one curve point a line."""
    text = json.dumps(to_dict(profile, description, calibration),
                      indent=2, sort_keys=True)
    return _PAIR.sub(r'[\1, \2]', text) + '\n'


def dump(profile, path, description='', calibration=None):
    """Write ``profile`` as JSON to ``path``."""
    with open(path, 'w') as f:
        f.write(dumps(profile, description, calibration))
