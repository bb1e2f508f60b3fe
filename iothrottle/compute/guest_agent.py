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
parsed by the pure ``parse_*`` functions below, which return a value or
raise :class:`GuestAgentError` with a one-line reason, nothing else,
whatever the bytes (property-tested).  A slow guest is bounded too:
:func:`run` and :func:`read_file` take a ``budget_s`` for all their
commands and polls together, so one guest costs its caller at most
``budget_s`` plus a second (the agent's timeout is whole seconds; a file
is closed with one more second whatever is left).
"""

import base64
import binascii
import json
import math
import threading
import time

import libvirt

# A reply larger than this is not a /proc file of a sane guest.
MAX_REPLY_BYTES = 1 << 20
# Pause between two guest-exec-status polls: the command is a cat of
# /proc files, done in well under a second even under TCG.
EXEC_POLL_S = 0.05
# A pid is a positive C int in the guest.
MAX_PID = 2 ** 31 - 1


class GuestAgentError(RuntimeError):
    pass


class GuestAgentTimeout(GuestAgentError):
    """The guest did not answer in time (its budget, or libvirt's)."""


# libvirt's ways of saying the guest agent did not answer in time.
_TIMEOUTS = (libvirt.VIR_ERR_AGENT_UNRESPONSIVE,
             libvirt.VIR_ERR_OPERATION_TIMEOUT)


def _send(dom, request_json, timeout_s):
    """The raw reply text of one agent command (libvirt's transport)."""
    import libvirt_qemu
    return libvirt_qemu.qemuAgentCommand(dom, request_json, timeout_s, 0)


def command(dom, execute, arguments=None, timeout_s=10):
    """Run one agent command; returns its ``return`` value."""
    request = {'execute': execute}
    if arguments is not None:
        request['arguments'] = arguments
    try:
        reply = _send(dom, json.dumps(request), int(timeout_s))
    except libvirt.libvirtError as exc:
        error = (GuestAgentTimeout if exc.get_error_code() in _TIMEOUTS
                 else GuestAgentError)
        raise error('%s: %s' % (execute, _one_line(
            exc.get_error_message() or exc)))
    return parse_reply(execute, reply)


def parse_reply(execute, reply):
    """The ``return`` value of the agent's ``reply`` text to ``execute``."""
    if not isinstance(reply, (str, bytes)) or len(reply) > MAX_REPLY_BYTES:
        raise GuestAgentError('%s: no reply or reply too large' % execute)
    try:
        return json.loads(reply)['return']
    except (ValueError, KeyError, TypeError, IndexError,
            RecursionError) as exc:
        raise GuestAgentError('%s: malformed reply (%s)'
                              % (execute, _one_line(exc)))


def parse_exec_pid(value):
    """The pid in a ``guest-exec`` return value."""
    pid = value.get('pid') if isinstance(value, dict) else None
    if not _is_int(pid) or not 0 < pid <= MAX_PID:
        raise GuestAgentError('guest-exec: no valid pid in reply')
    return pid


def parse_exec_status(value):
    """``(exited, stdout bytes)`` of a ``guest-exec-status`` value."""
    if not isinstance(value, dict):
        raise GuestAgentError('guest-exec-status: reply is not an object')
    exited = value.get('exited')
    if not isinstance(exited, bool):
        raise GuestAgentError('guest-exec-status: "exited" is not a '
                              'boolean')
    return exited, (_b64(value.get('out-data', '')) if exited else b'')


def parse_file_chunk(value):
    """``(bytes, done)`` of a ``guest-file-read`` value."""
    if not isinstance(value, dict):
        raise GuestAgentError('guest-file-read: reply is not an object')
    count = value.get('count', 0)
    if not _is_int(count) or count < 0:
        raise GuestAgentError('guest-file-read: "count" is not an integer '
                              '>= 0')
    data = _b64(value.get('buf-b64', ''))
    return data, bool(value.get('eof')) or not count


def parse_file_handle(value):
    """The handle in a ``guest-file-open`` value."""
    if not _is_int(value) or value < 0:
        raise GuestAgentError('guest-file-open: no valid handle in reply')
    return value


class _Budget:
    """What is left of ``budget_s`` seconds from now on ``clock``."""

    def __init__(self, what, budget_s, clock):
        self.what, self.budget_s, self.clock = what, budget_s, clock
        self.deadline_s = clock() + budget_s

    def timeout_s(self):
        """Whole seconds (>= 1) the next command may take; raises
        GuestAgentError once the budget is spent."""
        left_s = self.deadline_s - self.clock()
        if left_s <= 0:
            raise GuestAgentTimeout('%s: no answer within %.1f s'
                                    % (self.what, self.budget_s))
        return max(1, int(math.ceil(left_s)))

    def pause(self, pause_s):
        # Waiting for a guest process has no event to wait on.
        threading.Event().wait(
            max(0.0, min(pause_s, self.deadline_s - self.clock())))


def read_file(dom, path, max_bytes=256 * 1024, budget_s=5,
              clock=time.monotonic):
    """The contents (bytes) of a guest file, at most ``max_bytes``, read
    within ``budget_s`` seconds."""
    budget = _Budget('guest-file-read %s' % path, budget_s, clock)
    handle = parse_file_handle(command(
        dom, 'guest-file-open', {'path': path, 'mode': 'r'},
        budget.timeout_s()))
    try:
        data = b''
        while len(data) < max_bytes:
            chunk, done = parse_file_chunk(command(
                dom, 'guest-file-read', {'handle': handle, 'count': 65536},
                budget.timeout_s()))
            data += chunk
            if done:
                break
        return data[:max_bytes]
    finally:
        try:
            command(dom, 'guest-file-close', {'handle': handle}, 1)
        except GuestAgentError:
            pass


def run(dom, argv, budget_s=5, clock=time.monotonic):
    """Run ``argv`` in the guest (``guest-exec``); returns stdout bytes.

    The command, and every poll of its status, must be done within
    ``budget_s`` seconds in all.
    """
    budget = _Budget('guest-exec %s' % argv[0], budget_s, clock)
    pid = parse_exec_pid(command(dom, 'guest-exec', {
        'path': argv[0], 'arg': list(argv[1:]), 'capture-output': True},
        budget.timeout_s()))
    while True:
        exited, out = parse_exec_status(command(
            dom, 'guest-exec-status', {'pid': pid}, budget.timeout_s()))
        if exited:
            return out
        budget.pause(EXEC_POLL_S)


def ping(dom, timeout_s=2):
    command(dom, 'guest-ping', None, timeout_s)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _b64(text):
    if not isinstance(text, str):
        raise GuestAgentError('base64 data in reply is not a string')
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise GuestAgentError('bad base64 in reply (%s)' % _one_line(exc))


def _one_line(value, limit=200):
    """``value`` as one line of at most ``limit`` characters."""
    text = ' '.join(str(value).split())
    return text if len(text) <= limit else text[:limit - 3] + '...'
