"""Storage domain load: the capacity the policy measured it against.

The ``guarantee`` policy learns a domain's capacity from congestion and
completions; the load it reports is a fraction of that capacity, which
is stored beside it (NULL for policies that learn none, and until the
conductor stores a round).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

COLUMNS = ('policy_max_iops', 'policy_max_bytes_sec')


def upgrade():
    for name in COLUMNS:
        op.add_column('storage_domains',
                      sa.Column(name, sa.Double(), nullable=True))


def downgrade():
    for name in reversed(COLUMNS):
        op.drop_column('storage_domains', name)
