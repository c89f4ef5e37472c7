"""A miss policy for tests, named by path: it counts its calls in a file and answers slowly.

``tests.mock_tools.counting_policy:CountingPolicy`` appends one line per call it answers to the
file ``$COUNTING_POLICY_LOG`` (with the process id), waits ``delay`` seconds, then answers with a
response naming that process; its answers are recorded (kept in the overlay)."""

from __future__ import annotations

import asyncio
import os

from mock_tools.miss import Miss, MissAnswer, MissPolicyOptions
from mock_tools.models import Response


class CountingOptions(MissPolicyOptions):
    delay: float = 0.5


class CountingPolicy:
    name = "counting"
    records = True
    Options = CountingOptions

    def __init__(self, options: CountingOptions) -> None:
        self.options = options

    async def answer(self, miss: Miss) -> MissAnswer:
        with open(os.environ["COUNTING_POLICY_LOG"], "a") as fh:
            fh.write(f"{os.getpid()} {miss.tool}/{miss.api} {miss.key}\n")
        await asyncio.sleep(self.options.delay)
        body = {"answered_by": os.getpid(), "key": miss.key}
        return MissAnswer(Response(ok=True, body=body), "simulated", record_as="simulated")

    async def aclose(self) -> None:
        return None
