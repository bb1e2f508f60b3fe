"""Balloon floors: min_memory_mb on tiers and cached flavor guarantees.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    # MiB; 0 (what existing rows get) means the [balloon] floor_fraction.
    for table in ('tiers', 'flavor_guarantees'):
        op.add_column(table, sa.Column('min_memory_mb', sa.Double(),
                                       nullable=False, server_default='0'))
