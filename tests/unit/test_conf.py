from oslo_config import cfg
import testtools

from iothrottle import conf as iothrottle_conf
from iothrottle.conf import opts
from iothrottle.controller import guarantee
from iothrottle.controller import noop
from iothrottle.controller import paper
from iothrottle.controller import policy


def fresh_conf(**controller):
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf([], project='iothrottle', default_config_files=[])
    for name, value in controller.items():
        conf.set_override(name, value, 'controller')
    return conf


class TestOpts(testtools.TestCase):

    def test_every_option_has_help(self):
        groups = opts.list_opts()
        self.assertEqual({'compute', 'controller', 'database', 'storage',
                          'agent', 'conductor', 'nova', 'balloon',
                          'iothrottle_cinder', 'cinder', 'api',
                          'upgrade_levels', 'coordination'},
                         {g.name for g, _ in groups})
        for group, options in groups:
            for opt in options:
                self.assertGreater(len(opt.help or ''), 20,
                                   '%s.%s' % (group.name, opt.name))

    def test_generator_entry_point_is_importable(self):
        self.assertTrue(opts.list_opts())


class TestPolicyLoading(testtools.TestCase):

    def test_each_policy_loads_through_its_entry_point(self):
        for name, cls in (('guarantee', guarantee.GuaranteePolicy),
                          ('paper', paper.PaperPolicy),
                          ('none', noop.NoopPolicy)):
            self.assertIsInstance(
                policy.load_policy(fresh_conf(policy=name)), cls)

    def test_tunables_come_from_the_conf(self):
        p = policy.load_policy(fresh_conf(policy='guarantee',
                                          guard_fraction=0.2, lease_s=12.0))
        self.assertEqual(0.2, p.tunables.guard_fraction)
        self.assertEqual(12.0, p.tunables.lease_s)

    def test_unknown_policy_is_named(self):
        exc = self.assertRaises(ValueError, policy.load_policy,
                                fresh_conf(policy='fastest'))
        self.assertIn("'fastest'", str(exc))
        self.assertIn('guarantee', str(exc))


class TestOverridesStayPut(testtools.TestCase):

    def test_override_in_one_conf_does_not_leak_into_another(self):
        a = fresh_conf(lease_s=7.0)
        b = fresh_conf()
        self.assertEqual(7.0, a.controller.lease_s)
        self.assertEqual(30.0, b.controller.lease_s)
