"""The base rules every iothrottle API policy is built from (secure
RBAC, the persona names of OpenStack's consistent-RBAC goal):

* ``admin_api``: the ``admin`` role; manages tiers, capacities, pools.
* ``operator_reader_api``: an admin, or Keystone's *system reader*
  (``reader`` on the system scope: auditors, monitoring); reads every
  storage domain, pool, decision and instance.
* ``project_reader_api``: the ``reader`` role (which ``member`` implies)
  on the project that owns the target instance; reads that instance's
  throttle state only.
* ``any_reader_api``: the ``reader`` role on any scope; reads what is
  no tenant's data (the tiers a cloud offers, like its flavors).
"""

from oslo_policy import policy

ADMIN = 'rule:admin_api'
OPERATOR_READER = 'rule:operator_reader_api'
OWNER_READER = 'rule:operator_reader_api or rule:project_reader_api'
ANY_READER = 'rule:any_reader_api'

# Every rule accepts project- and system-scoped tokens; the check
# strings say which roles on which scope pass.
SCOPES = ['project', 'system']

rules = [
    policy.RuleDefault(
        'admin_api', 'role:admin',
        description='An administrator: manages tiers, storage domain '
                    'capacities and Cinder pool profiles.',
        scope_types=SCOPES),
    policy.RuleDefault(
        'system_reader_api', 'role:reader and system_scope:all',
        description="Keystone's system reader: reads everything, writes "
                    'nothing.',
        scope_types=SCOPES),
    policy.RuleDefault(
        'operator_reader_api', 'rule:admin_api or rule:system_reader_api',
        description='An administrator or a system reader.',
        scope_types=SCOPES),
    policy.RuleDefault(
        'project_reader_api', 'role:reader and project_id:%(project_id)s',
        description='A reader (or member) of the project that owns the '
                    'target.',
        scope_types=SCOPES),
    policy.RuleDefault(
        'any_reader_api', 'role:reader',
        description='Any reader, of any project or of the system.',
        scope_types=SCOPES),
]


def list_rules():
    return rules


def rule(name, check_str, description, method, path):
    """A DocumentedRuleDefault of ``name`` for one operation."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}], scope_types=SCOPES)
