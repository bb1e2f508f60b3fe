"""Initial schema: tiers, flavor guarantee cache, storage domains,
decisions.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of iothrottle.db.models' types: a migration must not
# change when the models do.
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _rates():
    return [sa.Column('min_iops', sa.Double(), nullable=False),
            sa.Column('min_bytes_sec', sa.Double(), nullable=False),
            sa.Column('max_iops', sa.Double(), nullable=False),
            sa.Column('max_bytes_sec', sa.Double(), nullable=False),
            sa.Column('weight', sa.Double(), nullable=False)]


def upgrade():
    op.create_table(
        'tiers',
        sa.Column('name', sa.String(64), primary_key=True),
        *_rates(),
        sa.Column('created_at', DateTime, nullable=False),
        sa.Column('updated_at', DateTime, nullable=False),
        **TABLE_ARGS)
    op.create_table(
        'flavor_guarantees',
        sa.Column('flavor_id', sa.String(255), primary_key=True),
        sa.Column('flavor_name', sa.String(255), nullable=False),
        sa.Column('tier', sa.String(64), nullable=False),
        *_rates(),
        sa.Column('error', sa.String(1024), nullable=True),
        sa.Column('fetched_at', DateTime, nullable=False),
        **TABLE_ARGS)
    op.create_index('flavor_guarantees_flavor_name_idx',
                    'flavor_guarantees', ['flavor_name'])
    op.create_table(
        'storage_domains',
        sa.Column('key', sa.String(255), primary_key=True),
        sa.Column('max_iops', sa.Double(), nullable=False),
        sa.Column('max_bytes_sec', sa.Double(), nullable=False),
        sa.Column('capacity_source', sa.String(16), nullable=False),
        sa.Column('peak_iops', sa.Double(), nullable=False),
        sa.Column('peak_bytes_sec', sa.Double(), nullable=False),
        sa.Column('updated_at', DateTime, nullable=False),
        sa.CheckConstraint("capacity_source IN ('config', 'learned')",
                           name='storage_domains_capacity_source_ck'),
        **TABLE_ARGS)
    op.create_table(
        'decisions',
        sa.Column('id', BigId, primary_key=True, autoincrement=True),
        sa.Column('decided_at', DateTime, nullable=False),
        sa.Column('storage_domain', sa.String(255), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('device', sa.String(64), nullable=False),
        sa.Column('action', sa.String(16), nullable=False),
        sa.Column('cap_iops', sa.Double(), nullable=True),
        sa.Column('cap_bytes_sec', sa.Double(), nullable=True),
        sa.Column('lease_expires_at', DateTime, nullable=True),
        sa.Column('reason', sa.String(1024), nullable=False),
        sa.Column('policy', sa.String(64), nullable=False),
        **TABLE_ARGS)
    op.create_index('decisions_instance_uuid_decided_at_idx', 'decisions',
                    ['instance_uuid', 'decided_at'])
    op.create_index('decisions_storage_domain_decided_at_idx', 'decisions',
                    ['storage_domain', 'decided_at'])
    op.create_index('decisions_decided_at_idx', 'decisions', ['decided_at'])
