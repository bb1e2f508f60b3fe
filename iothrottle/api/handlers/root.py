"""``/``: the version document (no token needed)."""

from iothrottle.api import microversion
from iothrottle.api import util


@util.Wsgify
def home(req):
    version = {
        'id': 'v%s' % microversion.min_version_string(),
        'min_version': microversion.min_version_string(),
        'max_version': microversion.max_version_string(),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ''}],
    }
    return util.json_response(req, {'versions': [version]})
