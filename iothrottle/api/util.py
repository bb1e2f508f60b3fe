"""Shared by the handlers: JSON errors and responses, the request
context, query parameters."""

import datetime
import json

from oslo_middleware import request_id
import webob
import webob.dec
import webob.exc

from iothrottle.api import microversion

# Where the context middleware puts the request's RequestContext.
CONTEXT_ENVIRON = 'iothrottle.context'


def json_error_formatter(body, status, title, environ):
    """OpenStack's error document (API-SIG errors guideline) for webob's
    exceptions: ``{"errors": [{"status", "title", "detail",
    "request_id"}]}``."""
    # webob's body is its generic explanation, then the detail given:
    # the detail alone says what is wrong.
    parts = [part.strip() for part in webob.exc.strip_tags(body).split(
        '\n\n') if part.strip()]
    error = {'status': int(status.split(None, 1)[0]), 'title': title,
             'detail': parts[-1] if parts else title}
    if request_id.ENV_REQUEST_ID in environ:
        error['request_id'] = environ[request_id.ENV_REQUEST_ID]
    if (error['status'] == 406
            and microversion.MICROVERSION_ENVIRON not in environ):
        error['min_version'] = microversion.min_version_string()
        error['max_version'] = microversion.max_version_string()
    return {'errors': [error]}


class Wsgify(webob.dec.wsgify):
    """webob's wsgify that formats every HTTP error as JSON."""

    def call_func(self, req, *args, **kwargs):
        try:
            return super().call_func(req, *args, **kwargs)
        except webob.exc.HTTPException as exc:
            exc.json_formatter = json_error_formatter
            raise

    @staticmethod
    def unsupported(req):
        """415 for a body that is not JSON."""
        return webob.exc.HTTPUnsupportedMediaType(
            'The media type %s is not supported, use application/json'
            % (req.content_type or 'None'),
            json_formatter=json_error_formatter)


def bad_request(message):
    """A 400 whose detail is the one-line ``message``."""
    return webob.exc.HTTPBadRequest(message,
                                    json_formatter=json_error_formatter)


def not_found(message):
    return webob.exc.HTTPNotFound(message,
                                  json_formatter=json_error_formatter)


def too_large(limit):
    return webob.exc.HTTPRequestEntityTooLarge(
        'body: larger than %d bytes ([api] max_body_bytes)' % limit,
        json_formatter=json_error_formatter)


def conflict(message):
    return webob.exc.HTTPConflict(message,
                                  json_formatter=json_error_formatter)


def unavailable(message):
    """A 503 whose detail is the one-line ``message``."""
    return webob.exc.HTTPServiceUnavailable(
        message, json_formatter=json_error_formatter)


def bool_param(params, name):
    """Parameter ``name`` of ``params``: 'true' or 'false' (any case);
    False if absent; 400 for anything else."""
    text = params.get(name)
    if text is None:
        return False
    if text.lower() not in ('true', 'false'):
        raise bad_request('%s: must be true or false, got %r'
                          % (name, text[:40]))
    return text.lower() == 'true'


def json_response(req, data, status=200):
    response = req.response
    response.status = status
    response.content_type = 'application/json'
    response.charset = 'utf-8'
    response.body = json.dumps(data, sort_keys=True).encode('utf-8')
    return response


def no_content(req):
    response = req.response
    response.status = 204
    response.content_type = None
    return response


def context(req):
    return req.environ[CONTEXT_ENVIRON]


def route_arg(req, name):
    """The value of ``{name}`` in the matched route."""
    return req.environ['wsgiorg.routing_args'][1][name]


def timestamp(when):
    """An ISO 8601 UTC timestamp ('2026-12-01T12:00:00.123456Z') of a
    naive UTC datetime; None stays None."""
    if when is None:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return when.isoformat() + 'Z'


def query(req, allowed):
    """``{name: value}`` of the query string; 400 for a parameter not in
    ``allowed`` or given twice."""
    found = {}
    for name, value in req.GET.items():
        if name not in allowed:
            raise bad_request('unknown query parameter %r (expected one of '
                              '%s)' % (name[:40], ', '.join(allowed)))
        if name in found:
            raise bad_request('query parameter %r given twice' % name)
        found[name] = value
    return found


def limit_param(req, params, default):
    """``limit`` of ``params``: a whole number from 1 to [api]
    max_limit, ``default`` if absent (capped the same)."""
    maximum = req.environ['iothrottle.conf'].api.max_limit
    text = params.get('limit')
    if text is None:
        return min(default, maximum)
    if not (text.isascii() and text.isdigit()) or not (
            1 <= int(text) <= maximum):
        raise bad_request('limit: must be a whole number from 1 to %d, got '
                          '%r' % (maximum, text[:40]))
    return int(text)


def time_param(params, name):
    """Parameter ``name`` as a naive UTC datetime from ISO 8601 text
    (a time without an offset is UTC); None if absent."""
    text = params.get(name)
    if text is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(
            text[:-1] + '+00:00' if text.endswith('Z') else text)
    except ValueError:
        raise bad_request('%s: must be an ISO 8601 time such as '
                          '2026-12-01T12:00:00Z, got %r'
                          % (name, text[:40])) from None
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return when
