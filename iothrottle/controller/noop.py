"""The ``none`` policy: observe, never cap (the uncontrolled baseline)."""

from iothrottle.controller import policy


class NoopPolicy(policy.Policy):

    @classmethod
    def from_conf(cls, conf):
        return cls()

    def decide(self, view, state):
        return policy.Outcome(decisions=(), state=state)
