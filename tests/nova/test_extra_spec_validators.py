"""Nova's own extra spec validation with iothrottle installed beside it.

Nova loads ``iothrottle.nova.extra_spec_validators`` through the
``nova.api.extra_spec_validators`` entry point; these tests call Nova's
``validators.load_validators()`` and ``validators.validate()`` as
nova-api does, and the flavor extra specs API's own check.
"""

from nova.api.openstack import api_version_request
from nova.api.openstack.compute import flavors_extraspecs
from nova.api.validation.extra_specs import validators
from nova import exception
from stevedore import extension
import testtools

from iothrottle import extra_specs

GOOD = (
    ('iothrottle:tier', 'gold'),
    ('iothrottle:tier', 'bench.vm2-v2_1'),
    ('iothrottle:min_iops', '150'),
    ('iothrottle:min_iops', '0'),
    ('iothrottle:min_bytes_sec', '1e6'),
    ('iothrottle:min_bytes_sec', '819200'),
    ('iothrottle:max_iops', '2000.5'),
    ('iothrottle:max_bytes_sec', '104857600'),
    ('iothrottle:weight', '0.5'),
    ('iothrottle:min_memory_mb', '1024'),
)

BAD = (
    ('iothrottle:min_iops', 'abc',
     "Validation failed; iothrottle:min_iops: must be a number >= 0, "
     "got 'abc'."),
    ('iothrottle:min_bytes_sec', '-1',
     "Validation failed; iothrottle:min_bytes_sec: must be a number >= 0,"
     " got '-1'."),
    ('iothrottle:max_iops', 'nan',
     "Validation failed; iothrottle:max_iops: must be a number >= 0, "
     "got 'nan'."),
    ('iothrottle:max_bytes_sec', '',
     "Validation failed; iothrottle:max_bytes_sec: must be a number >= 0,"
     " got ''."),
    ('iothrottle:weight', '0',
     'Validation failed; iothrottle:weight: must be > 0, got 0.'),
    ('iothrottle:min_memory_mb', '1G',
     "Validation failed; iothrottle:min_memory_mb: must be a number >= 0,"
     " got '1G'."),
    ('iothrottle:tier', 'gold tier',
     "Validation failed; iothrottle:tier: must be a tier name "
     "([A-Za-z0-9][A-Za-z0-9._-]{0,63}), got 'gold tier'."),
)


class _Request:
    """What the extra specs API reads from a request: its microversion
    (validation of extra specs starts at 2.86)."""

    def __init__(self, version):
        self.api_version_request = api_version_request.APIVersionRequest(
            version)

    def is_legacy_v2(self):
        return False


class TestNovaValidators(testtools.TestCase):

    def setUp(self):
        super().setUp()
        validators.load_validators()

    def test_entry_point_found_by_stevedore(self):
        manager = extension.ExtensionManager(
            'nova.api.extra_spec_validators', invoke_on_load=False)
        self.assertIn('iothrottle', manager.names())
        # Nova's own validators load beside it.
        self.assertIn('hw', manager.names())

    def test_every_key_registered(self):
        for spec in extra_specs.SPECS:
            self.assertIn(spec.name, validators.VALIDATORS)
            self.assertEqual(spec.description,
                             validators.VALIDATORS[spec.name].description)
        self.assertIn('iothrottle', validators.NAMESPACES)

    def test_good_values_pass(self):
        for name, value in GOOD:
            validators.validate(name, value)

    def test_bad_values_rejected_naming_the_key(self):
        for name, value, message in BAD:
            exc = self.assertRaises(exception.ValidationError,
                                    validators.validate, name, value)
            self.assertEqual(message, exc.format_message())
            self.assertEqual(400, exc.code)

    def test_unknown_key_of_the_namespace_rejected(self):
        exc = self.assertRaises(exception.ValidationError,
                                validators.validate, 'iothrottle:min_iop',
                                '5')
        self.assertIn("extra spec 'iothrottle:min_iop' does not appear to "
                      "be a valid extra spec", exc.format_message())

    def test_nova_validators_unaffected(self):
        validators.validate('hw:cpu_policy', 'dedicated')
        validators.validate('quota:disk_read_iops_sec', '500')
        self.assertRaises(exception.ValidationError, validators.validate,
                          'hw:cpu_policy', 'bogus')

    def test_flavor_set_property_through_the_api_check(self):
        # What "openstack flavor set --property iothrottle:min_iops=abc"
        # reaches: the extra specs API's check of its request body.
        controller = flavors_extraspecs.FlavorExtraSpecsController()
        req = _Request('2.86')
        exc = self.assertRaises(
            exception.ValidationError,
            controller._check_extra_specs_value, req,
            {'hw:cpu_policy': 'dedicated', 'iothrottle:min_iops': 'abc'})
        self.assertEqual(400, exc.code)
        self.assertIn('iothrottle:min_iops: must be a number >= 0',
                      exc.format_message())
        controller._check_extra_specs_value(
            req, {'iothrottle:tier': 'gold', 'iothrottle:min_iops': '150'})
        # Before microversion 2.86 Nova validated no extra spec at all.
        controller._check_extra_specs_value(
            _Request('2.85'), {'iothrottle:min_iops': 'abc'})
