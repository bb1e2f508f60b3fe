"""The conductor's membership of the tooz group (shell).

:class:`Membership` joins ``[coordination] group`` on ``backend_url``
under a member id of its own (host name and a random suffix: a conductor
restarted after ``kill -9`` must not wait for its old self to expire),
lets tooz's heart beat on its thread, and reads the members every
``refresh_s`` on another, turning them into an
:class:`~iothrottle.conductor.ownership.View`.  A conductor whose
member list is older than ``stale_after_s`` owns nothing until it reads
one again (the backend is unreachable: it may have been replaced), and
one that finds itself no longer in the group (expired while it could not
beat) joins again.  tooz is imported here only, after
:func:`iothrottle.rpc.threads.setup` (tooz imports futurist).
"""

import socket
import threading
import time
import uuid

from oslo_log import log as logging

from iothrottle.conductor import ownership

LOG = logging.getLogger(__name__)

# Longest wait for one backend request (join, members): a hung backend
# must not hold the refresh thread much longer than stale_after_s.
REQUEST_TIMEOUT_S = 5.0


def member_id(host=None):
    """``<host>-<8 hex digits>``: unique per conductor process."""
    return '%s-%s' % (host or socket.gethostname(), uuid.uuid4().hex[:8])


class Membership:
    """See the module docstring; :meth:`current` is the view to decide
    with.  ``coordinator`` (tests) replaces tooz's coordinator of
    ``backend_url``."""

    def __init__(self, backend_url, group, me, partitions=32,
                 refresh_s=1.0, stale_after_s=5.0, clock=time.monotonic,
                 wall_clock=time.time, coordinator=None):
        self.backend_url = backend_url
        self.group = group.encode('utf-8')
        self.me = me
        self.partitions = partitions
        self.refresh_s = refresh_s
        self.stale_after_s = stale_after_s
        self.clock = clock
        self.wall_clock = wall_clock
        self._coordinator = coordinator
        self._view = None
        # What a conductor with no recent member list decides: nothing.
        self._nobody = ownership.View(me=me, members=frozenset(), epoch=0,
                                      partitions=partitions)
        self._read_s = None
        self._healthy = True
        self._stop = threading.Event()
        self._thread = None

    @classmethod
    def from_conf(cls, conf, me):
        group = conf.coordination
        return cls(group.backend_url, group.group, me,
                   partitions=group.partitions, refresh_s=group.refresh_s,
                   stale_after_s=group.stale_after_s)

    # -- life cycle ---------------------------------------------------

    def start(self):
        """Join the group and read its members once (raises when the
        backend cannot be reached); then refresh on a daemon thread."""
        if self._coordinator is None:
            from tooz import coordination
            self._coordinator = coordination.get_coordinator(
                self.backend_url, self.me.encode('utf-8'))
        self._coordinator.start(start_heart=True)
        self._join()
        self.refresh()
        self._thread = threading.Thread(target=self._run,
                                        name='iothrottle-membership',
                                        daemon=True)
        self._thread.start()
        LOG.info('conductor %s joined group %s', self.me,
                 self.group.decode())

    def stop(self):
        """Leave the group (the others take this conductor's domains at
        their next refresh, not after the membership timeout)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(REQUEST_TIMEOUT_S)
        if self._coordinator is None:
            return
        try:
            self._coordinator.leave_group(self.group).get(
                timeout=REQUEST_TIMEOUT_S)
        except Exception as exc:
            LOG.debug('leaving group %s: %s', self.group, exc)
        try:
            self._coordinator.stop()
        except Exception as exc:
            LOG.debug('stopping the coordinator: %s', exc)

    def _join(self):
        from tooz import coordination
        try:
            self._coordinator.join_group_create(self.group)
        except coordination.MemberAlreadyExist:
            pass

    def _run(self):
        while not self._stop.wait(self.refresh_s):
            try:
                self.refresh()
            except Exception as exc:
                self._failed(exc)

    # -- the view -----------------------------------------------------

    def refresh(self):
        """Read the members and update the view (raises on failure)."""
        members = {member.decode('utf-8') for member in
                   self._coordinator.get_members(self.group).get(
                       timeout=REQUEST_TIMEOUT_S)}
        if self.me not in members:
            LOG.warning('conductor %s is no longer in group %s (it could '
                        'not beat in time); joining again', self.me,
                        self.group.decode())
            self._join()
            members.add(self.me)
        previous = self._view if self._read_s is not None and \
            not self._stale() else None
        view = ownership.next_view(previous, self.me, members,
                                   self.wall_clock() * 1000.0,
                                   self.partitions)
        if view is not self._view:
            LOG.info('conductor %s: %d member(s) in group %s (%s), epoch '
                     '%d', self.me, len(members), self.group.decode(),
                     ', '.join(sorted(members)), view.epoch)
        self._view = view
        self._read_s = self.clock()
        if not self._healthy:
            self._healthy = True
            LOG.info('coordination backend reachable again')

    def _failed(self, exc):
        if self._healthy:
            self._healthy = False
            LOG.warning('cannot read the members of group %s (%s); this '
                        'conductor decides no domain once its view is %.0f '
                        's old', self.group.decode(),
                        str(exc).splitlines()[0] if str(exc) else exc,
                        self.stale_after_s)
        else:
            LOG.debug('reading members: %s', exc)

    def _stale(self):
        return (self._read_s is None
                or self.clock() - self._read_s > self.stale_after_s)

    def current(self):
        """The view to decide with: the last one read, or one that owns
        nothing when it is older than ``stale_after_s``."""
        if self._view is None or self._stale():
            return self._nobody
        return self._view
