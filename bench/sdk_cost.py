"""What the openai package costs per model call, apart from the socket and the bytes themselves.

``python -m bench.sdk_cost PORT SUITE`` (what ``bench model`` runs in a fresh interpreter): runs
20 tasks of the k=3 suite at SUITE with the HTTP model at PORT (``bench.fake_model``), keeping
every ``complete`` call the agent made (messages, tools, params); then makes the same calls
again, in rounds, through an ``OpenAICompatModel`` whose HTTP client answers in process
(``MockTransport`` calling ``bench.fake_model.answer``: no socket, no server), and prints the CPU
µs per call of:

- ``model``: the whole model call without a socket (``complete``: the request built, sent through
  the openai package's client, the answer checked and turned into a ``Turn``);
- ``bytes``: what any client must do with the same call: serialise the request body
  (``json.dumps``) and parse and check the answer (``checked_completion``), then build the
  ``Turn``;
- ``answer``: the mock server's own work (``answer`` and its JSON), which ``model`` includes
  and a real server does in another process.

``model - bytes - answer`` is the package's own CPU per call (its request building, headers,
URL, retries' wrappers and client layers): what a client without it would not spend.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

from agents.models.completion_body import checked_completion
from agents.models.openai_compat import OpenAICompatModel
from bench.fake_model import answer

Call = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]


def _record_calls(port: int, suite: Path, out: Path) -> list[Call]:
    """The model calls 20 episodes of the suite make with the HTTP model."""
    from sandbox.run import run_suite
    from sandbox.store import RunConfig

    calls: list[Call] = []
    real = OpenAICompatModel.complete

    async def keep(self: OpenAICompatModel, messages: Any, tools: Any, params: Any = None) -> Any:
        calls.append((json.loads(json.dumps(messages)), tools, params))
        return await real(self, messages, tools, params)

    OpenAICompatModel.complete = keep  # type: ignore[method-assign]
    try:
        config = RunConfig(
            suite=str(suite),
            agent="react",
            model=f"openai:k3@http://127.0.0.1:{port}/v1",
            out=str(out),
        ).with_values({"tasks": [f"k3_{i:05d}" for i in range(20)]})
        run_suite(config, show_progress=False)
    finally:
        OpenAICompatModel.complete = real  # type: ignore[method-assign]
    return calls


def _in_process_model() -> OpenAICompatModel:
    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.dumps(answer(json.loads(request.content))).encode()
        return httpx2.Response(200, content=body, headers={"content-type": "application/json"})

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    return OpenAICompatModel("k3", "http://127.0.0.1:9/v1", http_client=client)


def _cpu_us(job: Any, calls: list[Call], repeat: int) -> float:
    started = time.process_time()
    asyncio.run(job(calls, repeat))
    return (time.process_time() - started) / (len(calls) * repeat) * 1e6


async def _model_calls(calls: list[Call], repeat: int) -> None:
    model = _in_process_model()
    for _ in range(repeat):
        for messages, tools, params in calls:
            await model.complete(messages, tools, params)


async def _bytes_only(calls: list[Call], repeat: int) -> None:
    model = _in_process_model()
    replies = [json.dumps(_reply(c)).encode() for c in calls]
    for _ in range(repeat):
        for (messages, tools, params), reply in zip(calls, replies, strict=True):
            body = {**(params or {}), "model": "k3", "messages": messages, "tools": tools}
            json.dumps(body).encode()
            model._to_turn(checked_completion(reply, endpoint="bench"))


async def _answers(calls: list[Call], repeat: int) -> None:
    for _ in range(repeat):
        for call in calls:
            json.dumps(_reply(call)).encode()


def _reply(call: Call) -> dict[str, Any]:
    return answer({"model": "k3", "messages": call[0]})


def measure(port: int, suite: Path, out: Path, rounds: int) -> dict[str, float]:
    calls = _record_calls(port, suite, out)
    jobs = {"model": _model_calls, "bytes": _bytes_only, "answer": _answers}
    per_call: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(rounds):
        for name, job in jobs.items():
            per_call[name].append(_cpu_us(job, calls, 5))
    figures = {name: statistics.median(v) for name, v in per_call.items()}
    figures["calls"] = len(calls)
    return figures


def main(argv: list[str]) -> None:
    """``PORT SUITE [ROUNDS]``: print the figures as one line of JSON."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rounds = int(argv[2]) if len(argv) > 2 else 5
        print(json.dumps(measure(int(argv[0]), Path(argv[1]), Path(tmp), rounds)))


if __name__ == "__main__":
    main(sys.argv[1:])
