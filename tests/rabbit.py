"""The real RabbitMQ of functional and e2e tests.

RabbitMQ listens at 127.0.0.1:5672 (guest/guest); :func:`ensure_rabbitmq`
starts it (``rabbitmq-server -detached``) when it does not answer and
waits with a deadline.
"""

import socket
import subprocess
import time

URL = 'rabbit://guest:guest@127.0.0.1:5672/'
# Seconds RabbitMQ may take to answer after rabbitmq-server -detached.
START_DEADLINE_S = 90.0


def rabbit_answers():
    """Whether something accepts connections on RabbitMQ's port."""
    try:
        socket.create_connection(('127.0.0.1', 5672), timeout=2).close()
        return True
    except OSError:
        return False


def wait(predicate, deadline_s, what):
    """Poll ``predicate`` until true; AssertionError after the deadline."""
    deadline = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %gs waiting for %s'
                                 % (deadline_s, what))
        time.sleep(0.1)


def ensure_rabbitmq():
    """Start RabbitMQ if it does not answer; fail if it will not."""
    if rabbit_answers():
        return
    subprocess.run(['rabbitmq-server', '-detached'], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(rabbit_answers, START_DEADLINE_S, 'RabbitMQ to answer after '
         'rabbitmq-server -detached')
