"""Run a console script's ``main`` inside a test, output captured."""

import io

import fixtures


def run_main(test, main, argv):
    """``main(argv)`` with stdout and stderr captured for ``test`` (a
    testtools TestCase); returns (exit code, stdout, stderr)."""
    out = test.useFixture(fixtures.MonkeyPatch('sys.stdout',
                                               io.StringIO())).new_value
    err = test.useFixture(fixtures.MonkeyPatch('sys.stderr',
                                               io.StringIO())).new_value
    code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
