"""The OSC plugin module: how python-openstackclient makes the client.

The API is found in the service catalog under the service type
``iothrottle`` (:data:`iothrottle.api.microversion.SERVICE_TYPE`: the
same name as the microversion header, as the API-SIG asks; see that
module for why not ``io-guarantee``), at the interface and region of
the OSC session (``--os-interface``, ``--os-region-name``), through the
session's keystoneauth plugin: a token from Keystone, never a stored
password of ours.
"""

from osc_lib import utils

API_NAME = 'iothrottle'
API_VERSION_OPTION = 'os_iothrottle_api_version'
API_VERSIONS = {'1': 'iothrottle.osc.client.Client'}
DEFAULT_API_VERSION = '1'


def make_client(instance):
    """The client of OSC's ClientManager ``instance``."""
    client_class = utils.get_client_class(
        API_NAME, instance._api_version[API_NAME], API_VERSIONS)
    return client_class(
        session=instance.session, interface=instance.interface,
        region_name=instance.region_name)


def build_option_parser(parser):
    parser.add_argument(
        '--os-iothrottle-api-version',
        metavar='<iothrottle-api-version>',
        default=utils.env('OS_IOTHROTTLE_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='iothrottle API major version (default: %s, or '
             '$OS_IOTHROTTLE_API_VERSION)' % DEFAULT_API_VERSION)
    return parser
