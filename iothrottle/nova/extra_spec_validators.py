"""nova-api validators of the ``iothrottle:`` flavor extra specs.

Nova loads :func:`register` through the stevedore namespace
``nova.api.extra_spec_validators`` (see ``setup.cfg``) and, from API
microversion 2.86 on, checks every extra spec an operator sets against
the validators registered for its namespace.  With iothrottle installed
beside nova-api::

    $ openstack flavor set m1.large --property iothrottle:min_iops=abc
    Validation failed; iothrottle:min_iops: must be a number >= 0, got
    'abc'. (HTTP 400)

and an unknown key of the namespace (``iothrottle:min_iop``) is refused
as Nova refuses any unknown key of a namespace it knows.  The checks are
:func:`iothrottle.extra_specs.check_spec`, the very ones the conductor
applies.  Nova hands a validator one key at a time, so what needs two
keys or the conductor's tiers - a floor above its ceiling, a tier name
that does not exist - cannot be checked here: the conductor rejects such
a flavor (:func:`iothrottle.extra_specs.guarantee_from_extra_specs`),
logging why, and gives its instances no guarantee.

Nova is imported inside :func:`register` only: iothrottle does not
depend on Nova.
"""

import re

from iothrottle import extra_specs


def _validator_class():
    """Nova's ExtraSpecValidator with iothrottle's checks of the value."""
    from nova.api.validation.extra_specs import base
    from nova import exception

    class IothrottleValidator(base.ExtraSpecValidator):
        """Checks the value with iothrottle.extra_specs.check_spec, so a
        message names the key and says what the key accepts."""

        def validate(self, name, value):
            if not re.fullmatch(self.name_regex, name):
                # As Nova's own validate(), for direct calls.
                raise exception.ValidationError(
                    f"Validation failed; expected a name of format "
                    f"'{self.name}' but got '{name}'.")
            try:
                extra_specs.check_spec(name, value)
            except ValueError as exc:
                raise exception.ValidationError(
                    f'Validation failed; {exc}.') from None

    return IothrottleValidator


def register():
    """One validator per key of :data:`iothrottle.extra_specs.SPECS`."""
    validator = _validator_class()
    validators = []
    for spec in extra_specs.SPECS:
        if spec.name == extra_specs.TIER:
            value = {'type': str,
                     'pattern': extra_specs.TIER_NAME_PATTERN,
                     'description': 'the name of a tier'}
        else:
            # No pattern: check_spec alone decides what is a number.
            value = {'type': str, 'description': 'a number >= 0'}
        validators.append(validator(name=spec.name,
                                    description=spec.description,
                                    value=value))
    return validators
