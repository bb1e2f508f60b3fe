"""The conductor: one decision maker for the storage domains of all hosts.

:mod:`iothrottle.conductor.core` is pure (domain grouping, guarantee
resolution, one decision round); :mod:`iothrottle.conductor.service` is
the shell around it (RPC, clock, database, Nova).
"""
