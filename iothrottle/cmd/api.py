"""``iothrottle-api``: the operator API from one process, for a quick
local run (``[api] host`` and ``port``, default 127.0.0.1:8797).
Deployed, run ``iothrottle.wsgi.api:application`` under uwsgi or
gunicorn instead (see README, "Operator API")."""

import socketserver
import sys
from wsgiref import simple_server

PROG = 'iothrottle-api'


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    """Requests are logged by oslo.log, not on stderr."""

    def log_message(self, format, *args):
        pass


def main(argv=None):
    from oslo_config import cfg
    from oslo_log import log as logging

    from iothrottle.api import config
    from iothrottle.api import deploy
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = config.build_conf(argv, prog=PROG)
    except cfg.Error as exc:
        sys.stderr.write('%s: %s\n' % (PROG, str(exc).splitlines()[0]))
        return 1
    logging.setup(conf, 'iothrottle')
    try:
        application = deploy.deploy(conf)
        server = simple_server.make_server(
            conf.api.host, conf.api.port, application,
            server_class=_ThreadingServer, handler_class=_QuietHandler)
    except (OSError, ValueError) as exc:
        sys.stderr.write('%s: %s\n' % (PROG, str(exc).splitlines()[0]))
        return 1
    logging.getLogger(__name__).info('serving on http://%s:%d/',
                                     conf.api.host, conf.api.port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
