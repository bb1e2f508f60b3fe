"""Request bodies: JSON objects whose every field is checked before
anything is written.

Each error is a 400 with one line naming the culprit field: unknown
fields, missing required ones, wrong JSON types, numbers out of range
(the ranges of :mod:`iothrottle.tiers`: 0 to 1e15, no NaN or infinity,
which JSON itself cannot carry and Python's parser would otherwise
accept).
"""

import json
import math

from iothrottle.api import util
from iothrottle import tiers


def _no_constant(name):
    raise ValueError('%s is not JSON' % name)


def json_body(req):
    """The request's JSON object; 415 unless it is application/json,
    413 beyond [api] max_body_bytes, 400 unless a JSON object."""
    if req.content_type != 'application/json':
        raise util.Wsgify.unsupported(req)
    limit = req.environ['iothrottle.conf'].api.max_body_bytes
    if req.content_length is not None and req.content_length > limit:
        raise util.too_large(limit)
    raw = req.body_file.read(limit + 1)
    if len(raw) > limit:
        raise util.too_large(limit)
    try:
        data = json.loads(raw.decode('utf-8'),
                          parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise util.bad_request('body: malformed JSON: %s'
                               % str(exc).splitlines()[0][:200]) from None
    if not isinstance(data, dict):
        raise util.bad_request('body: must be a JSON object, got %s'
                               % type(data).__name__)
    return data


def fields(data, allowed, required=(), where=''):
    """Check ``data`` has only ``allowed`` keys and every ``required``
    one; returns ``data``."""
    for name in data:
        if name not in allowed:
            raise util.bad_request('%s: unknown field %s (expected one of '
                                   '%s)' % (where or 'body',
                                            tiers.shown(name),
                                            ', '.join(allowed)))
    for name in required:
        if name not in data:
            raise util.bad_request('%s: required' % _join(where, name))
    return data


def number(data, name, where=''):
    """Field ``name``: a JSON number in [0, tiers.MAX_VALUE]."""
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise util.bad_request('%s: must be a number, got %s'
                               % (_join(where, name), tiers.shown(value)))
    try:
        return tiers.parse_number(value)
    except ValueError as exc:
        raise util.bad_request('%s: %s' % (_join(where, name), exc)) from None


def numbers(data, names, where=''):
    """The fields of ``names`` present in ``data``, each a number."""
    return {name: number(data, name, where) for name in names
            if name in data}


def string(data, name, max_chars, where='', nullable=False):
    """Field ``name``: a non-empty string of at most ``max_chars``."""
    value = data[name]
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value or len(value) > max_chars:
        raise util.bad_request('%s: must be a string of 1 to %d '
                               'characters%s, got %s'
                               % (_join(where, name), max_chars,
                                  ' or null' if nullable else '',
                                  tiers.shown(value)))
    return value


def obj(data, name, where=''):
    """Field ``name``: a JSON object."""
    value = data[name]
    if not isinstance(value, dict):
        raise util.bad_request('%s: must be a JSON object, got %s'
                               % (_join(where, name), tiers.shown(value)))
    return value


def _join(where, name):
    return '%s.%s' % (where, name) if where else name
