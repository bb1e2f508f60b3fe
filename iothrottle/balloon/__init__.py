"""Balloon targets: which guest's page cache deserves the host's memory."""
