"""What every controller policy is, and how a service picks one.

A policy is a pure function with a little memory: ``decide(view, state)``
takes one storage domain's :class:`~iothrottle.controller.model.DomainView`
and the state it returned last time, and returns an :class:`Outcome` with
the decisions and its next state.  It reads no clock (``view.now_s`` is
the time) and does no I/O; the shells (compute agent, conductor) own the
clock, libvirt and the leases.  Policies are found through the
``iothrottle.policies`` entry point namespace and built with
``from_conf(conf)``.
"""

import abc
import dataclasses

from stevedore import driver

from iothrottle.controller import idle
from iothrottle.controller import model

NAMESPACE = 'iothrottle.policies'


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A policy's answer for one domain and interval: ``decisions``, the
    ``state`` for the next interval and, when the policy judges load
    its own way (a learned capacity, a latency test), the domain's
    ``load``, whether it found it ``saturated`` and the ``capacity`` it
    measured the load against; None leaves them to :meth:`Policy.load`,
    :meth:`Policy.saturation_border` and the capacity it was told."""
    decisions: tuple
    state: object = None
    load: float = None
    saturated: bool = None
    capacity: model.Capacity = None


class Policy(abc.ABC):
    """Base of the controller policies."""

    @classmethod
    @abc.abstractmethod
    def from_conf(cls, conf):
        """Build the policy from the ``[controller]`` option group."""

    def initial_state(self):
        """State of a storage domain the policy has not seen yet."""
        return None

    def load(self, capacity, iops, bytes_sec):
        """The fraction of ``capacity`` (a Capacity) that totals of
        ``iops`` and ``bytes_sec`` take, as this policy measures load.
        Default: the busier axis, ``max(iops / max_iops, bytes_sec /
        max_bytes_sec)``."""
        return max(iops / capacity.max_iops,
                   bytes_sec / capacity.max_bytes_sec)

    def saturation_border(self):
        """The load at or above which this policy counts a domain as
        saturated; None when it has no such border (a domain is then
        saturated at its full capacity, load 1.0)."""
        return None

    @abc.abstractmethod
    def decide(self, view, state):
        """Return the :class:`Outcome` for one interval of one domain."""

    def describe(self, state):
        """One line of what the policy learned of a domain whose state
        is ``state``, for the conductor's log beside the domain's load;
        '' when it learns nothing to say (the default)."""
        return ''

    def watch(self, state):
        """The :class:`~iothrottle.controller.idle.Watch` the checks
        within the next interval read for a domain whose state is
        ``state``, or None: what a shell that runs the checks without
        the policy (the conductor-mode agent) is sent.  Default: None
        (a policy that decides only once an interval)."""
        return None

    def wants_check(self, state):
        """Whether a check within the interval can decide anything for
        a domain whose state is ``state``: its watch holds a disk whose
        stop a check could still hand out.  The shell samples the host
        at a check only if one of its domains says so."""
        watch = self.watch(state)
        return watch is not None and idle.has_watched(watch)

    def early(self, view, state):
        """The :class:`Outcome` of a check within an interval: ``view``
        holds the samples since the last check (or decision) and the
        caps in force, ``state`` what the last decision or check left.
        Default: nothing to decide, the state kept (a policy that
        decides only once an interval)."""
        return Outcome(decisions=(), state=state)


def minimum_cap(conf):
    """The :class:`~iothrottle.controller.model.MinimumCap` of
    ``[controller] min_cap_iops`` and ``min_cap_bytes_sec``, which every
    policy honours."""
    return model.MinimumCap(iops=conf.controller.min_cap_iops,
                            bytes_sec=conf.controller.min_cap_bytes_sec)


def load_policy(conf, name=None):
    """Build the policy named ``name`` (default ``[controller] policy``).

    Raises ``ValueError`` naming the policy when no entry point has it.
    """
    name = name or conf.controller.policy
    try:
        manager = driver.DriverManager(NAMESPACE, name, invoke_on_load=False)
    except Exception as exc:
        known = ', '.join(sorted(available_policies()))
        raise ValueError('unknown controller policy %r (known: %s): %s'
                         % (name, known, exc)) from None
    return manager.driver.from_conf(conf)


def available_policies():
    from stevedore import extension
    return extension.ExtensionManager(NAMESPACE).names()
