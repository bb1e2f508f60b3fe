"""[balloon]: the memory balloon scheduler of the compute agent.

The policies and their tunables are explained in the essay of
``iothrottle.balloon.cams``; the guest reports in
``iothrottle.balloon.estimator``.
"""

from oslo_config import cfg

from iothrottle.conf import groups

GROUP = cfg.OptGroup(
    'balloon',
    title='Balloon scheduler',
    help='How the compute agent moves memory between the guests of a '
         'host with balloon targets.')

OPTS = [
    cfg.StrOpt('policy',
               default='none',
               help='Balloon policy, an entry point of the '
                    '"iothrottle.balloon_policies" namespace: "cams" (memory '
                    'to the guests whose page cache is read most, seed '
                    '004), "proportional" (memory follows read rate, the '
                    'paper\'s SMS baseline) or "none" (balloons stay, '
                    'except to relieve a guest below its floor).'),
    cfg.BoolOpt('enabled',
                default=False,
                help='Run the balloon loop alongside the I/O caps.'),
    cfg.FloatOpt('interval_s',
                 default=2.0, min=0.5,
                 help='Seconds between two balloon decisions; also the '
                      'least time between two guest reports of one guest '
                      '(more frequent ones are dropped).'),
    cfg.FloatOpt('step_mb',
                 default=16.0, min=1.0,
                 help='MiB "cams" moves per interval (seed 004: 64 pages '
                      'in 2 MB balloon units).'),
    cfg.FloatOpt('max_step_mb',
                 default=64.0, min=1.0,
                 help='Largest change of one guest\'s balloon per '
                      'interval, MiB.'),
    cfg.FloatOpt('evenness',
                 default=0.1, min=0.0, max=1.0,
                 help='Relative spread of cache utilizations that counts '
                      'as even (no move). Unitless.'),
    cfg.FloatOpt('margin_mb',
                 default=32.0, min=0.0,
                 help='MiB a guest keeps above what it uses, so a shrink '
                      'never makes it swap or OOM.'),
    cfg.FloatOpt('floor_fraction',
                 default=0.25, min=0.0, max=1.0,
                 help='Default floor of a guest: this fraction of its '
                      'flavor memory. Unitless.'),
    cfg.IntOpt('stuck_intervals',
               default=3, min=1,
               help='A guest whose balloon stays off its target this '
                    'many intervals does not honour it: its balloon is '
                    'left alone for a back-off that doubles each time '
                    '(no tight retry). Intervals.'),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return [(GROUP, OPTS)]
