"""Messaging between compute agents and the conductor (oslo.messaging).

Import :mod:`iothrottle.rpc.threads` and call its ``setup()`` before
anything imports ``oslo_messaging``: iothrottle runs on native threads
only and must never load eventlet (nova-compute poisons it).
"""
