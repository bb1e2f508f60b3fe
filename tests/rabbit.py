"""The real RabbitMQ of functional and e2e tests (see
:mod:`iothrottle.bench.services`, which the benches share)."""

from iothrottle.bench import services

URL = services.RABBIT_URL
START_DEADLINE_S = services.RABBIT_START_S
ensure_rabbitmq = services.ensure_rabbitmq
rabbit_answers = services.rabbit_answers
wait = services.wait
