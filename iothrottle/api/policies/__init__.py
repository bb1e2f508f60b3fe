"""Policy defaults in code: the ``oslo.policy.policies`` entry point
``iothrottle`` (``oslopolicy-sample-generator --namespace iothrottle``)."""

import itertools

from iothrottle.api.policies import base
from iothrottle.api.policies import decision
from iothrottle.api.policies import flavor
from iothrottle.api.policies import host
from iothrottle.api.policies import instance
from iothrottle.api.policies import pool
from iothrottle.api.policies import storage_domain
from iothrottle.api.policies import tier


def list_rules():
    return list(itertools.chain(
        base.list_rules(), tier.list_rules(), flavor.list_rules(),
        storage_domain.list_rules(), instance.list_rules(),
        pool.list_rules(), decision.list_rules(),
        host.list_rules()))
