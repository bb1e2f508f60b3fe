"""The outermost error handler of the application: an unexpected
exception is logged and answered with a JSON 500, never a traceback;
an unreachable database with a JSON 503."""

from oslo_log import log as logging
import sqlalchemy as sa
import webob.exc

from iothrottle.api import util

LOG = logging.getLogger(__name__)


class FaultWrapper:

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            return self.application(environ, start_response)
        except sa.exc.OperationalError as exc:
            LOG.warning('database error: %s', str(exc).splitlines()[0])
            response = webob.exc.HTTPServiceUnavailable(
                'the database cannot be reached',
                json_formatter=util.json_error_formatter)
        except Exception:
            LOG.exception('unexpected error in the iothrottle API')
            response = webob.exc.HTTPInternalServerError(
                'unexpected error; the service log has the details',
                json_formatter=util.json_error_formatter)
        return response(environ, start_response)
