"""Seek-distance (HDD) and queue-depth (flash) throughput models of a
storage pool, their JSON profiles and the calibration probe."""
