"""Simulated tool responses: what a simulator is told about a missing call, and two simulators.

When a call has no recording, the ``simulate`` miss policy asks a simulator to play the API. It
gets a ``SimulationRequest``: the tool and API documentation (name, description, required and
optional parameters with their types, descriptions and defaults, the response template when the
suite has one), the canonical arguments, and up to ``MAX_EXAMPLES`` recorded calls of the same API
as examples (fewer while their text is longer than ``MAX_EXAMPLE_CHARS``; StableToolBench's
numbers). Examples come from the suite's own recordings only, never from earlier simulations, so
what a simulation says does not depend on the order in which misses happened.

- ``SchemaSimulator`` (``schema-sim``): offline and deterministic; fills the API's response
  template (or a small generic body) with values derived from the call, for tests and demos.
- ``PromptedSimulator``: an LLM plays the API. It is given a ``complete(messages)`` coroutine
  (the harness makes one from any model of its registry) and must answer with one JSON object,
  ``{"error": "", "response": ...}``; code fences are stripped; a reply that is not a JSON object
  is retried, then the simulation fails (``SimulationFailed``): an infrastructure error of that
  call, never a response.

``named_simulator(name)`` resolves ``schema-sim`` here and any other name through the installed
``mock_tools.simulators`` entry points (agent-sandbox's harness resolves its model names there).
Imports ``mock_tools.models``, ``canonical``, ``store`` and ``errors`` only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol

from pydantic import BaseModel

from mock_tools.canonical import dumps_canonical
from mock_tools.errors import MockToolsError
from mock_tools.models import ApiSpec, Response, ToolSpec
from mock_tools.store import RecordingStore

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "Completion",
    "PromptedSimulator",
    "SchemaSimulator",
    "SimulationFailed",
    "SimulationRequest",
    "SimulatorUsage",
    "ToolSimulator",
    "named_simulator",
    "parse_simulated",
    "simulation_messages",
    "simulation_request",
]

MAX_EXAMPLES = 5
MAX_EXAMPLE_CHARS = 2048
ENTRY_POINT_GROUP = "mock_tools.simulators"
SCHEMA_SIM = "schema-sim"


class SimulationFailed(MockToolsError):
    """The simulator could not produce a response (endpoint down, no JSON object)."""


@dataclass(frozen=True)
class SimulationRequest:
    """Everything a simulator is told about one missing call."""

    tool: str
    api: str
    args: dict[str, Any]
    tool_description: str = ""
    spec: ApiSpec | None = None
    examples: list[tuple[dict[str, Any], Response]] = field(default_factory=list)

    def documentation(self) -> dict[str, Any]:
        """The API's documentation as a JSON-ready dict."""
        spec = self.spec or ApiSpec(name=self.api)
        props = spec.parameters.get("properties") or {}
        required = set(spec.parameters.get("required") or [])

        def param(name: str) -> dict[str, Any]:
            found = props.get(name)
            schema: dict[str, Any] = found if isinstance(found, dict) else {}
            out: dict[str, Any] = {"name": name, "type": schema.get("type", "any")}
            if schema.get("description"):
                out["description"] = schema["description"]
            if "default" in schema:
                out["default"] = schema["default"]
            return out

        doc: dict[str, Any] = {
            "tool": self.tool,
            "tool_description": self.tool_description,
            "api": self.api,
            "api_description": spec.description,
            "required_parameters": [param(n) for n in props if n in required],
            "optional_parameters": [param(n) for n in props if n not in required],
        }
        if spec.returns:
            doc["response_template"] = spec.returns
        return doc


def simulation_request(
    tool: ToolSpec | None, api: str, args: dict[str, Any], store: RecordingStore
) -> SimulationRequest:
    """The request for a miss of ``tool``'s ``api``, with recorded examples of the same API."""
    spec = next((a for a in tool.apis if a.name == api), None) if tool is not None else None
    tool_name = tool.name if tool is not None else ""
    examples: list[tuple[dict[str, Any], Response]] = []
    for key in store.keys(tool_name, api)[:MAX_EXAMPLES]:
        response = store.get(tool_name, api, key)
        if response is not None:
            examples.append((json.loads(key), response))
    while len(examples) > 1 and len(_examples_text(examples)) > MAX_EXAMPLE_CHARS:
        examples.pop()
    return SimulationRequest(
        tool=tool_name,
        api=api,
        args=dict(args),
        tool_description=tool.description if tool is not None else "",
        spec=spec,
        examples=examples,
    )


def _examples_text(examples: list[tuple[dict[str, Any], Response]]) -> str:
    return json.dumps(
        [{"arguments": a, "output": _observed(r)} for a, r in examples], ensure_ascii=False
    )


def _observed(response: Response) -> dict[str, Any]:
    return {"error": response.error, "response": response.body}


class ToolSimulator(Protocol):
    """What the ``simulate`` policy calls (a plain ``(tool, api, args)`` callable works too)."""

    name: str

    async def simulate(self, request: SimulationRequest) -> Response: ...


# -- the offline simulator -------------------------------------------------------------------


class SchemaSimulator:
    """``schema-sim``: a deterministic response built from the API's template and the call.

    A JSON response template (ToolBench's ``template_response``: a skeleton whose leaves name
    types) is filled: an argument of the same name gives its value, other leaves a value derived
    from a hash of the call and the leaf's path. Without a template the body echoes the call with a
    derived id. The same call always gets the same body.
    """

    name = SCHEMA_SIM

    async def simulate(self, request: SimulationRequest) -> Response:
        seed = dumps_canonical([request.tool, request.api, request.args])
        template = _template(request.spec.returns if request.spec else None)
        if template is None:
            body: Any = {
                "api": request.api,
                "arguments": request.args,
                "id": _digest(seed, "id")[:12],
            }
        else:
            body = _fill(template, request.args, seed, "$")
        return Response(ok=True, body=body)


def _template(text: str | None) -> Any:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, (dict, list)) and value else None


def _digest(seed: str, path: str) -> str:
    return hashlib.sha256(f"{seed}\0{path}".encode()).hexdigest()


def _fill(template: Any, args: dict[str, Any], seed: str, path: str) -> Any:
    if isinstance(template, dict):
        return {
            k: args[k]
            if k in args and not isinstance(v, (dict, list))
            else _fill(v, args, seed, f"{path}.{k}")
            for k, v in template.items()
        }
    if isinstance(template, list):
        item = template[0] if template else "str"
        return [_fill(item, args, seed, f"{path}[{i}]") for i in range(2)]
    h = int(_digest(seed, path)[:8], 16)
    kind = str(template).lower()
    if kind in ("int", "integer", "number") or kind.startswith("int"):
        return h % 1000
    if kind in ("float", "double", "decimal"):
        return round((h % 100_000) / 100, 2)
    if kind in ("bool", "boolean"):
        return h % 2 == 0
    if kind in ("nonetype", "null", "none"):
        return None
    leaf = path.rsplit(".", 1)[-1].split("[", 1)[0]
    return f"{leaf}-{h % 100_000:05d}"


# -- the prompted simulator -----------------------------------------------------------------


@dataclass
class Completion:
    """One answer of the simulator's model, with what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    retries: int = 0


class SimulatorUsage(BaseModel):
    """What a simulator consumed (reported apart from the agents' usage)."""

    model: str = ""
    simulations: int = 0
    calls: int = 0
    failures: int = 0
    invalid_replies: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


SYSTEM = """You stand in for a web API that is unavailable. You receive the API's documentation, \
a few real calls of it with what it answered, and a new call. Answer the new call as the real \
API would: data of the shape its documentation and examples show, plausible and specific to the \
arguments, consistent with the examples. When the arguments could not work (a required parameter \
missing, a value of the wrong kind), answer as the API would answer such a call.
Reply with exactly one JSON object and nothing else: {"error": "", "response": <the API's \
output>}. Put an error message in "error" only for a failed call, with "response" empty then."""


def simulation_messages(request: SimulationRequest) -> list[dict[str, Any]]:
    """The chat messages a prompted simulator sends."""
    shown = _examples_text(request.examples)[:MAX_EXAMPLE_CHARS] if request.examples else "none"
    user = "\n\n".join(
        [
            "Documentation:\n" + json.dumps(request.documentation(), ensure_ascii=False),
            "Recorded calls:\n" + shown,
            "New call, arguments:\n" + json.dumps(request.args, ensure_ascii=False),
        ]
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")


def parse_simulated(text: str) -> Response | None:
    """The response in a simulator's reply, or None when it is not one JSON object."""
    try:
        value = json.loads(_FENCE.sub("", text or "").strip())
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    if "response" not in value and "error" not in value:
        return Response(ok=True, body=value)  # the body alone, without the envelope
    error = value.get("error")
    error_text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    body = value.get("response")
    return Response(ok=not error, body=body if body is not None else "", error=error_text or "")


Complete = Callable[[list[dict[str, Any]]], Awaitable[Completion]]


class PromptedSimulator:
    """An LLM playing the API through ``complete``; ``attempts`` replies before it gives up."""

    def __init__(self, complete: Complete, *, name: str, attempts: int = 3) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.complete = complete
        self.name = name
        self.attempts = attempts
        self.usage = SimulatorUsage(model=name)

    async def simulate(self, request: SimulationRequest) -> Response:
        self.usage.simulations += 1
        messages = simulation_messages(request)
        for _ in range(self.attempts):
            try:
                completion = await self.complete(messages)
            except SimulationFailed:
                self.usage.failures += 1
                raise
            self.usage.calls += 1
            self.usage.retries += completion.retries
            self.usage.prompt_tokens += completion.prompt_tokens
            self.usage.completion_tokens += completion.completion_tokens
            self.usage.cost += completion.cost
            response = parse_simulated(completion.text)
            if response is not None:
                return response
            self.usage.invalid_replies += 1
        self.usage.failures += 1
        raise SimulationFailed(
            f"simulator {self.name} did not answer with a JSON object in {self.attempts} attempts"
        )


def named_simulator(name: str) -> ToolSimulator:
    """``schema-sim``, or a simulator an installed ``mock_tools.simulators`` entry point makes."""
    if name == SCHEMA_SIM:
        return SchemaSimulator()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        resolve = ep.load()
        simulator = resolve(name)
        if simulator is not None:
            return simulator
    raise MockToolsError(
        f"unknown simulator {name!r}: built in is {SCHEMA_SIM!r}; model names (an alias of "
        "models.yaml, openai:<model>@<base_url>) need agent-sandbox's harness installed"
    )
