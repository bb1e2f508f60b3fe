"""[database]: where the conductor keeps tiers, capacities and decisions.

SQLAlchemy URLs; the schema is created and upgraded by
``iothrottle-manage db sync`` (alembic migrations in
``iothrottle/db/migrations``).
"""

from oslo_config import cfg

from iothrottle.conf import groups

DEFAULT_CONNECTION = 'sqlite:////var/lib/iothrottle/iothrottle.sqlite'

GROUP = cfg.OptGroup(
    'database',
    title='Database',
    help='The conductor\'s database: guarantee tiers, the flavor '
         'guarantee cache, storage domain capacities and the log of cap '
         'decisions.')

OPTS = [
    cfg.StrOpt('connection',
               default=DEFAULT_CONNECTION,
               secret=True,
               help='SQLAlchemy URL of the database. The default is an '
                    'embedded SQLite file (its directory is created by '
                    '"iothrottle-manage db sync"); for MySQL or MariaDB '
                    'use e.g. "mysql+pymysql://iothrottle:PASSWORD@host/'
                    'iothrottle?charset=utf8mb4" (needs PyMySQL).'),
    cfg.IntOpt('connection_recycle_time',
               default=3600, min=1,
               help='A pooled connection older than this is replaced '
                    'before use, so a server that drops idle connections '
                    '(MySQL wait_timeout) does not break the next query. '
                    'Seconds.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
