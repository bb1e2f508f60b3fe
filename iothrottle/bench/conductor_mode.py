"""The scenario bench's agent in conductor mode (``--mode conductor``).

Production runs the agents in conductor mode: each host reports its
interval to the conductor, whose round decides every storage domain and
casts each host its decisions and its part of each domain's watch; the
agent applies them and checks its disks on the watch until its next
report (compute RPC 1.3, :mod:`iothrottle.controller.idle`).  The
standalone agent the bench runs by default decides in its own step and
checks with the policy at hand.  This runs the conductor's path on the
bench's clock, in one process: the real
:class:`iothrottle.rpc.agent.RemoteAgent` (report, apply, watch,
checks) around the real :class:`iothrottle.compute.agent.Agent` (no
policy, as ``iothrottle-compute`` builds it), the real conductor core
and :meth:`iothrottle.conductor.service.Conductor.publish`, and the
wire dicts both ways.  The bus between them is a loopback
(:class:`Loopback`) that hands each cast to the agent at once, so a
round's decisions are in force when its step returns, as the
standalone agent's are; left out are the broker's milliseconds (the
same casts run on RabbitMQ in ``tests/functional/
test_conductor_rabbit.py``) and the wait for other hosts (one host
here).  The conductor learns the domain's capacity as
``[conductor] learn_capacity`` says, as a real one does.
"""

import dataclasses
import types

from iothrottle.controller import policy as policy_mod

# The one host of the bench's conductor.
HOST = 'bench'


class Loopback:
    """The conductor's compute API for one in-process agent: each cast
    goes to ``remote`` (a RemoteAgent) as it is made.  Memory floors
    are not cast (the bench runs no balloon loop)."""

    sends_memory_floors = False
    sends_watch = True

    def __init__(self):
        self.remote = None

    def apply(self, host, decisions):
        self.remote.apply(decisions)

    def watch(self, host, watch):
        self.remote.watch(watch)


class ConductorModeAgent:
    """What the scenario runner drives (``conf``, ``step``,
    ``check_idle``, ``release_all``) in conductor mode: ``agent`` an
    Agent without a policy, ``tiers`` the plan's guarantees,
    ``capacities`` the CapacityTable the standalone agent would be
    told."""

    def __init__(self, conf, agent, tiers, capacities):
        from iothrottle.rpc import threads
        threads.setup()   # oslo.messaging below: no eventlet
        import futurist
        from iothrottle.conductor import core
        from iothrottle.conductor import service
        from iothrottle.rpc import agent as remote_mod
        self.conf = conf
        self.agent = agent
        interval_s = conf.controller.interval_s
        self.core = core.Core(
            policy_mod.load_policy(conf), tiers,
            core.Capacities(capacities.default, capacities.by_domain,
                            learn=conf.conductor.learn_capacity),
            interval_s=interval_s)
        self.bus = Loopback()
        # Its database writes (none: no engine) inline, no thread.
        self.conductor = service.Conductor(
            self.core, self.bus, service.Store(None),
            conf.controller.policy, writer=futurist.SynchronousExecutor())
        self.remote = remote_mod.RemoteAgent(
            agent, None, HOST, interval_s, reporter=self,
            check_s=conf.controller.idle_check_s)
        self.bus.remote = self.remote

    # The RemoteAgent's reporter: its report reaches the conductor now.

    def submit(self, report):
        self.conductor.report(report)

    def stop(self):
        """Nothing to stop: the reports go inline."""

    def step(self):
        """One interval: the agent's report, the conductor's round on
        it, its casts applied.  The StepReport carries the round's
        decisions, the caps in force after them and the policy's
        states, as the standalone agent's does."""
        report = self.remote.step()
        # On the clock the conductor took the report in with.
        round_ = self.core.decide(self.conductor.clock())
        self.conductor.publish(round_)
        return dataclasses.replace(
            report,
            decisions=tuple(decision for decision, _ in
                            round_.by_host.get(HOST, ())),
            caps=types.MappingProxyType(self.agent.caps()),
            states=types.MappingProxyType(self.core.states()))

    def check_idle(self):
        """A check within the interval on the conductor's watch."""
        return types.SimpleNamespace(decisions=self.remote.check())

    def release_all(self):
        return self.agent.release_all()
