"""Cinder pools: device profiles and the volumes placed on them.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

# Frozen copies of iothrottle.db.models' types (see 0001).
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade():
    op.create_table(
        'pool_profiles',
        sa.Column('pool', sa.String(255), primary_key=True),
        sa.Column('profile', sa.Text(), nullable=False),
        sa.Column('scheduler', sa.String(16), nullable=True),
        sa.Column('updated_at', DateTime, nullable=False),
        **TABLE_ARGS)
    op.create_table(
        'pool_volumes',
        sa.Column('volume_id', sa.String(255), primary_key=True),
        sa.Column('pool', sa.String(255), nullable=False),
        sa.Column('size_bytes', sa.Double(), nullable=False),
        sa.Column('offset_bytes', sa.Double(), nullable=True),
        sa.Column('min_iops', sa.Double(), nullable=False),
        sa.Column('min_bytes_sec', sa.Double(), nullable=False),
        sa.Column('read_fraction', sa.Double(), nullable=False),
        sa.Column('outstanding_requests', sa.Double(), nullable=False),
        sa.Column('recorded_at', DateTime, nullable=False),
        **TABLE_ARGS)
    op.create_index('pool_volumes_pool_idx', 'pool_volumes', ['pool'])
