"""Instances: the project owning each instance, and its flavor's tier.

The operator API shows a project member the throttle state of its own
instances only, and refuses to delete a tier instances still use; both
need what Nova said when the conductor last listed the instance's host.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

# Frozen copies of iothrottle.db.models' types (see 0001).
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade():
    op.create_table(
        'instances',
        sa.Column('instance_uuid', sa.String(36), primary_key=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('tier', sa.String(64), nullable=False),
        sa.Column('seen_at', DateTime, nullable=False),
        **TABLE_ARGS)
    op.create_index('instances_project_id_idx', 'instances', ['project_id'])
    op.create_index('instances_tier_idx', 'instances', ['tier'])
