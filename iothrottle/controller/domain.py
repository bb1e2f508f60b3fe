"""One storage domain through a policy: the step both shells share.

The standalone agent (one host) and the conductor (every host) differ in
where samples, guarantees and current caps come from, not in how a
domain is decided: pair each disk with its guarantee and cap, build the
:class:`~iothrottle.controller.model.DomainView`, run the policy, keep
only decisions about disks of this domain.  Pure: no I/O, no clock.
"""

import dataclasses

from iothrottle.controller import model


@dataclasses.dataclass(frozen=True)
class DomainResult:
    """What :func:`decide` made of one domain in one interval.

    ``decided`` pairs each Decision with the disk's Guarantee (the agent
    clamps caps to its ceilings); ``state`` is the policy's state for the
    next interval (the old one if the policy failed); ``errors`` are
    one-line messages; ``load``, ``saturated`` and ``capacity`` are the
    policy's own judgment of the domain, if it gave one
    (``policy.Outcome``).
    """
    decided: tuple
    state: object
    errors: tuple = ()
    load: float = None
    saturated: bool = None
    capacity: model.Capacity = None


def decide(policy, state, storage_domain, capacity_of, disks, now_s):
    """Run ``policy`` on ``disks``, ``(sample, guarantee, cap)`` triples of
    ``storage_domain`` (a cap that limits neither axis is passed on as
    no cap); ``state`` None starts the policy afresh and
    ``capacity_of(storage_domain)`` gives the domain's Capacity.  A policy
    that raises costs this domain its interval, nothing else."""
    return decide_inputs(policy, state, storage_domain, capacity_of,
                         tuple(disk_input(sample, guarantee, cap)
                               for sample, guarantee, cap in disks), now_s)


def disk_input(sample, guarantee, cap):
    """The DiskInput of one disk, a cap that limits neither axis passed
    on as no cap."""
    return model.DiskInput(sample, guarantee,
                           cap if cap is None or cap.limits else None)


def decide_inputs(policy, state, storage_domain, capacity_of, inputs,
                  now_s):
    """:func:`decide` on ``inputs``, a tuple of :func:`disk_input`: for a
    shell that builds them as it gathers the disks (the conductor: one
    pass over 10k disks instead of two)."""
    return _run(policy.decide, policy, state, storage_domain, capacity_of,
                inputs, now_s)


def check(policy, state, storage_domain, capacity_of, disks, now_s):
    """:func:`decide`'s check within an interval: ``disks`` sampled since
    the last check, ``policy.early`` run on them (the caps a disk that
    stopped leaves room for, :mod:`iothrottle.controller.idle`)."""
    return _run(policy.early, policy, state, storage_domain, capacity_of,
                tuple(disk_input(sample, guarantee, cap)
                      for sample, guarantee, cap in disks), now_s)


def _run(method, policy, state, storage_domain, capacity_of, inputs,
         now_s):
    """``method`` (the policy's decide or early) on one domain's
    ``inputs``, as :func:`decide` describes."""
    try:
        view = model.DomainView(
            storage_domain=storage_domain,
            capacity=capacity_of(storage_domain),
            disks=inputs, now_s=now_s)
        if state is None:
            state = policy.initial_state()
        outcome = method(view, state)
    except Exception as exc:
        message = 'policy failed on storage domain %s: %s' % (
            storage_domain, exc)
        return DomainResult((), state, (message,))
    decided, errors = [], []
    # Most domains get no decision: the lookup is built only for those
    # that do.
    guarantees = ({d.disk_id: d.guarantee for d in inputs}
                  if outcome.decisions else {})
    for decision in outcome.decisions:
        if decision.disk_id not in guarantees:
            errors.append('policy decided on %s, not a disk of storage '
                          'domain %s; ignored'
                          % (decision.disk_id, storage_domain))
            continue
        decided.append((decision, guarantees[decision.disk_id]))
    return DomainResult(tuple(decided), outcome.state, tuple(errors),
                        outcome.load, outcome.saturated, outcome.capacity)
