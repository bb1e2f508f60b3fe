"""The conductor's tables (SQLAlchemy 2.x declarative models).

The schema itself is made by the alembic migrations in
``iothrottle/db/migrations/versions``; a unit test checks that these
models and the migrations agree.  Times are naive UTC ``DATETIME`` (with
microseconds on MySQL/MariaDB); rates are doubles in the units of
:class:`iothrottle.controller.model.Guarantee` (IOPS, bytes/s), 0
meaning none.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm

# Longest tier name (see iothrottle.extra_specs.TIER_NAME_PATTERN).
TIER_NAME_LENGTH = 64
# Nova flavor ids and names, storage domain keys.
NAME_LENGTH = 255
REASON_LENGTH = 1024
# Where a storage domain's capacity comes from.
CAPACITY_CONFIG = 'config'
CAPACITY_LEARNED = 'learned'
CAPACITY_SOURCES = (CAPACITY_CONFIG, CAPACITY_LEARNED)

# Microseconds on MySQL/MariaDB (plain DATETIME keeps whole seconds).
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
# SQLite autoincrements only an INTEGER PRIMARY KEY.
BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')

TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def utcnow():
    """Now as the tables store it: naive UTC."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class Base(orm.DeclarativeBase):
    pass


class _Rates:
    """The guarantee columns shared by tiers and cached flavors."""
    min_iops: orm.Mapped[float] = orm.mapped_column(sa.Double, default=0.0)
    min_bytes_sec: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=0.0)
    max_iops: orm.Mapped[float] = orm.mapped_column(sa.Double, default=0.0)
    max_bytes_sec: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=0.0)
    weight: orm.Mapped[float] = orm.mapped_column(sa.Double, default=1.0)
    # Not a rate: the balloon floor in MiB (0: [balloon] floor_fraction).
    min_memory_mb: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=0.0)


class Tier(_Rates, Base):
    """A named guarantee; flavors refer to it with iothrottle:tier."""
    __tablename__ = 'tiers'
    __table_args__ = TABLE_ARGS

    name: orm.Mapped[str] = orm.mapped_column(sa.String(TIER_NAME_LENGTH),
                                              primary_key=True)
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow)
    updated_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow, onupdate=utcnow)


class FlavorGuarantee(_Rates, Base):
    """Cache: the guarantee a Nova flavor's extra specs resolved to.

    ``error`` is the one-line reason when the flavor's extra specs are
    invalid (its instances then get no guarantee); NULL when valid.
    """
    __tablename__ = 'flavor_guarantees'
    __table_args__ = (sa.Index('flavor_guarantees_flavor_name_idx',
                               'flavor_name'),
                      TABLE_ARGS)

    flavor_id: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH),
                                                   primary_key=True)
    flavor_name: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH))
    tier: orm.Mapped[str] = orm.mapped_column(sa.String(TIER_NAME_LENGTH),
                                              default='')
    error: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(REASON_LENGTH), nullable=True)
    fetched_at: orm.Mapped[datetime.datetime] = orm.mapped_column(DateTime)


class StorageDomain(Base):
    """A set of disks sharing one physical capacity, and that capacity.

    ``max_iops``/``max_bytes_sec`` are what the controller uses;
    ``capacity_source`` says whether the operator declared them
    (``config``) or they were learned from the peak observed throughput
    (``learned``), kept in ``peak_iops``/``peak_bytes_sec``: the total
    of one interval, which the conductor scales its default capacity's
    shape to (``iothrottle.conductor.core.peak_capacity``).

    The ``load_*`` columns and ``saturated`` are the conductor's last
    stored round (``load_at``; NULL until one): the domain's total
    ``load_iops`` and ``load_bytes_sec``, ``load_fraction`` of the
    capacity the controller used, whether that was at or above the
    policy's saturation border, and ``load_disks`` disks with
    ``load_caps`` of them under a cap; ``policy_max_iops`` and
    ``policy_max_bytes_sec`` the capacity the policy measured that load
    against when it learns its own (the ``guarantee`` policy, from
    congestion and completions), else NULL.  ``updated_at`` is the time of
    the last change of the capacity or peak, not of the load.
    """
    __tablename__ = 'storage_domains'
    __table_args__ = (
        sa.CheckConstraint("capacity_source IN ('config', 'learned')",
                           name='storage_domains_capacity_source_ck'),
        TABLE_ARGS)

    key: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH),
                                             primary_key=True)
    max_iops: orm.Mapped[float] = orm.mapped_column(sa.Double, default=0.0)
    max_bytes_sec: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=0.0)
    capacity_source: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=CAPACITY_LEARNED)
    peak_iops: orm.Mapped[float] = orm.mapped_column(sa.Double, default=0.0)
    peak_bytes_sec: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                          default=0.0)
    updated_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow, onupdate=utcnow)
    load_iops: orm.Mapped[float | None] = orm.mapped_column(sa.Double,
                                                            nullable=True)
    load_bytes_sec: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)
    load_fraction: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)
    saturated: orm.Mapped[bool | None] = orm.mapped_column(sa.Boolean,
                                                           nullable=True)
    load_disks: orm.Mapped[int | None] = orm.mapped_column(sa.Integer,
                                                           nullable=True)
    load_caps: orm.Mapped[int | None] = orm.mapped_column(sa.Integer,
                                                          nullable=True)
    load_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        DateTime, nullable=True)
    policy_max_iops: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)
    policy_max_bytes_sec: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)


class Decision(Base):
    """One cap or release the controller decided, and why."""
    __tablename__ = 'decisions'
    __table_args__ = (
        sa.Index('decisions_instance_uuid_decided_at_idx',
                 'instance_uuid', 'decided_at'),
        sa.Index('decisions_storage_domain_decided_at_idx',
                 'storage_domain', 'decided_at'),
        sa.Index('decisions_decided_at_idx', 'decided_at'),
        TABLE_ARGS)

    id: orm.Mapped[int] = orm.mapped_column(BigId, primary_key=True,
                                            autoincrement=True)
    decided_at: orm.Mapped[datetime.datetime] = orm.mapped_column(DateTime)
    storage_domain: orm.Mapped[str] = orm.mapped_column(
        sa.String(NAME_LENGTH))
    instance_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    device: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    action: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    cap_iops: orm.Mapped[float | None] = orm.mapped_column(sa.Double,
                                                           nullable=True)
    cap_bytes_sec: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)
    lease_expires_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(DateTime, nullable=True))
    reason: orm.Mapped[str] = orm.mapped_column(sa.String(REASON_LENGTH))
    policy: orm.Mapped[str] = orm.mapped_column(sa.String(64))


class PoolProfile(Base):
    """The device profile of a Cinder pool (``host@backend#pool``), for
    the seek-model weigher and filter.

    ``profile`` is the JSON document ``iothrottle.seekmodel.profile``
    validates; ``scheduler`` the host I/O scheduler in front of the
    device (NULL: unknown, the model's default alpha).
    """
    __tablename__ = 'pool_profiles'
    __table_args__ = TABLE_ARGS

    pool: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH),
                                              primary_key=True)
    profile: orm.Mapped[str] = orm.mapped_column(sa.Text)
    scheduler: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(16), nullable=True)
    updated_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow, onupdate=utcnow)


class PoolVolume(Base):
    """A volume placed on a Cinder pool: its size, position, guarantee
    and stream, as the seek model needs them.  ``offset_bytes`` NULL:
    after the volumes recorded before it."""
    __tablename__ = 'pool_volumes'
    __table_args__ = (sa.Index('pool_volumes_pool_idx', 'pool'),
                      TABLE_ARGS)

    volume_id: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH),
                                                   primary_key=True)
    pool: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH))
    size_bytes: orm.Mapped[float] = orm.mapped_column(sa.Double)
    offset_bytes: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double, nullable=True)
    min_iops: orm.Mapped[float] = orm.mapped_column(sa.Double, default=0.0)
    min_bytes_sec: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=0.0)
    read_fraction: orm.Mapped[float] = orm.mapped_column(sa.Double,
                                                         default=1.0)
    outstanding_requests: orm.Mapped[float] = orm.mapped_column(
        sa.Double, default=1.0)
    recorded_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow)


class Instance(Base):
    """An instance as Nova placed it when the conductor last listed its
    host: the project that owns it (who may read its throttle state) and
    the tier its flavor names ('' for none or explicit keys only).
    Recorded by the conductor's Nova directory
    (``iothrottle.conductor.instances``); only with ``[conductor]
    guarantees = nova``."""
    __tablename__ = 'instances'
    __table_args__ = (sa.Index('instances_project_id_idx', 'project_id'),
                      sa.Index('instances_tier_idx', 'tier'),
                      TABLE_ARGS)

    instance_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                       primary_key=True)
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(NAME_LENGTH))
    tier: orm.Mapped[str] = orm.mapped_column(sa.String(TIER_NAME_LENGTH),
                                              default='')
    seen_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        DateTime, default=utcnow)
