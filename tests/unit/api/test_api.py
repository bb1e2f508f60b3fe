"""Loads the gabbi YAML tests of ``gabbits/``: every route of the API,
in-process, through the whole middleware pipeline but auth_token."""

import os

from gabbi import driver
from gabbi.handlers import base
import wsgi_intercept

from tests.unit.api import fixtures

wsgi_intercept.STRICT_RESPONSE_HEADERS = True
TESTS_DIR = 'gabbits'


class ForbiddenStringsHandler(base.ResponseHandler):
    """``response_forbidden_strings``: none of these strings (each
    after $ENVIRON and friends are replaced) may be in the body."""

    test_key_suffix = 'forbidden_strings'
    test_key_value = []

    def action(self, test, item, value=None):
        item = test.replace_template(item)
        test.assertNotIn(item, test.output,
                         'forbidden %r in the response body' % item)


def load_tests(loader, tests, pattern):
    return driver.build_tests(os.path.join(os.path.dirname(__file__),
                                           TESTS_DIR),
                              loader, host=None,
                              test_loader_name=__name__,
                              intercept=fixtures.setup_app,
                              fixture_module=fixtures,
                              response_handlers=[ForbiddenStringsHandler])
