"""The QEMU guest agent, reached through libvirt (shell).

Nova gives an instance the ``org.qemu.guest_agent.0`` channel when its
image has ``hw_qemu_guest_agent=yes``; ``qemu-ga`` in the guest answers
QMP-like JSON commands that libvirt-python forwards with
``libvirt_qemu.qemuAgentCommand``.  iothrottle uses two of them to read
the guest's kernel counters without any iothrottle code in the guest:

* ``guest-file-open`` / ``guest-file-read`` / ``guest-file-close`` of a
  /proc file;
* ``guest-exec`` + ``guest-exec-status`` of a short ``cat``, for files
  whose names need a shell glob (``/proc/[0-9]*/io``).

Everything the guest answers is untrusted: replies are size-limited and
parsed defensively; failures raise :class:`GuestAgentError` with a
one-line reason.
"""

import base64
import json
import threading

import libvirt

# A reply larger than this is not a /proc file of a sane guest.
MAX_REPLY_BYTES = 1 << 20
# guest-exec-status polls: the command is a cat of /proc files, done in
# well under a second even under TCG; give up after this many.
EXEC_POLLS = 40
EXEC_POLL_S = 0.05


class GuestAgentError(RuntimeError):
    pass


def command(dom, execute, arguments=None, timeout_s=10):
    """Run one agent command; returns its ``return`` value."""
    import libvirt_qemu
    request = {'execute': execute}
    if arguments is not None:
        request['arguments'] = arguments
    try:
        reply = libvirt_qemu.qemuAgentCommand(dom, json.dumps(request),
                                              int(timeout_s), 0)
    except libvirt.libvirtError as exc:
        raise GuestAgentError('%s: %s' % (execute, exc.get_error_message()
                                          or exc))
    if reply is None or len(reply) > MAX_REPLY_BYTES:
        raise GuestAgentError('%s: no reply or reply too large' % execute)
    try:
        return json.loads(reply)['return']
    except (ValueError, KeyError, TypeError) as exc:
        raise GuestAgentError('%s: malformed reply (%s)' % (execute, exc))


def read_file(dom, path, max_bytes=256 * 1024, timeout_s=5):
    """The contents (bytes) of a guest file, at most ``max_bytes``."""
    handle = command(dom, 'guest-file-open', {'path': path, 'mode': 'r'},
                     timeout_s)
    try:
        data = b''
        while len(data) < max_bytes:
            chunk = command(dom, 'guest-file-read',
                            {'handle': handle, 'count': 65536}, timeout_s)
            data += _b64(chunk.get('buf-b64', ''))
            if chunk.get('eof') or not chunk.get('count'):
                break
        return data[:max_bytes]
    finally:
        try:
            command(dom, 'guest-file-close', {'handle': handle}, timeout_s)
        except GuestAgentError:
            pass


def run(dom, argv, timeout_s=5):
    """Run ``argv`` in the guest (``guest-exec``); returns stdout bytes."""
    started = command(dom, 'guest-exec', {
        'path': argv[0], 'arg': list(argv[1:]), 'capture-output': True},
        timeout_s)
    pid = started['pid'] if isinstance(started, dict) else None
    if not isinstance(pid, int):
        raise GuestAgentError('guest-exec: no pid in reply')
    pause = threading.Event()
    for _ in range(EXEC_POLLS):
        status = command(dom, 'guest-exec-status', {'pid': pid}, timeout_s)
        if status.get('exited'):
            return _b64(status.get('out-data', ''))
        # Waiting for a guest process has no event to wait on.
        pause.wait(EXEC_POLL_S)
    raise GuestAgentError('guest-exec %s: still running after %.1f s'
                          % (argv[0], EXEC_POLLS * EXEC_POLL_S))


def ping(dom, timeout_s=2):
    command(dom, 'guest-ping', None, timeout_s)


def _b64(text):
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as exc:
        raise GuestAgentError('bad base64 in reply (%s)' % exc)
