"""A synced throw-away SQLite database for the db unit tests."""

import fixtures

from iothrottle.db import api
from iothrottle.db import migration


class SyncedDatabase(fixtures.Fixture):
    """A SQLite file in a temporary directory, upgraded to head.

    A file rather than ``sqlite://``: every pooled connection then sees
    the same database, as with a real server.
    """

    def _setUp(self):
        directory = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///%s/iothrottle.sqlite' % directory
        self.engine = api.create_engine(self.url)
        self.addCleanup(self.engine.dispose)
        migration.upgrade(self.engine)
