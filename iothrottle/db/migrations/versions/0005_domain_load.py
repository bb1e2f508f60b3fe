"""Storage domain load: the conductor's last round of each domain.

Its total IOPS and bytes/s, the fraction of its capacity they took,
whether that was at or above the policy's saturation border, its disks
and caps in force, and when; NULL until the conductor stores a round.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

# Frozen copy of iothrottle.db.models' DateTime (see 0001).
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    for name, type_ in (('load_iops', sa.Double()),
                        ('load_bytes_sec', sa.Double()),
                        ('load_fraction', sa.Double()),
                        ('saturated', sa.Boolean()),
                        ('load_disks', sa.Integer()),
                        ('load_caps', sa.Integer()),
                        ('load_at', DateTime)):
        op.add_column('storage_domains',
                      sa.Column(name, type_, nullable=True))
