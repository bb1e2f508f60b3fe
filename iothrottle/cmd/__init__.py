"""Console scripts of iothrottle (``setup.cfg``'s console_scripts)."""

import sys


def configure(prog, build_conf, argv):
    """``build_conf(argv)`` with logging set up, or None after one line
    on stderr naming what is wrong (the caller exits with an error).

    oslo.config and oslo.log are imported here, not at module level:
    services call :func:`iothrottle.rpc.threads.setup` first.
    """
    from iothrottle.conf import controller as controller_conf
    from oslo_config import cfg
    from oslo_log import log as logging
    try:
        conf = build_conf(argv)
    except cfg.Error as exc:
        sys.stderr.write('%s: %s\n' % (prog, str(exc).splitlines()[0]))
        return None
    problem = ('controller' in conf and controller_conf.check(conf))
    if problem:
        sys.stderr.write('%s: %s\n' % (prog, problem))
        return None
    logging.setup(conf, 'iothrottle')
    return conf
