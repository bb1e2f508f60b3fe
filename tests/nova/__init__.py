"""Tests that need Nova 34 installed (``tox -e nova``, ``tools/test-nova``)."""
