"""``/``: the version document (no token needed).  Its ``self`` link is
the API's root as the client reached it: scheme and host of the request
(or of a TLS proxy's headers, [oslo_middleware]
enable_proxy_headers_parsing) and the path prefix it is served under
(SCRIPT_NAME: ``/iothrottle`` behind devstack's Apache)."""

from iothrottle.api import microversion
from iothrottle.api import util


@util.Wsgify
def home(req):
    version = {
        'id': 'v%s' % microversion.min_version_string(),
        'min_version': microversion.min_version_string(),
        'max_version': microversion.max_version_string(),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': req.application_url + '/'}],
    }
    return util.json_response(req, {'versions': [version]})
