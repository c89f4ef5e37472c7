import asyncio
from pathlib import Path

import pytest
from _step_builders import APIS, make_task

from agents.model import ToolCall, Turn
from mock_tools.models import Recording, Response, SuiteMeta, ToolSpec
from mock_tools.names import NameResolver
from mock_tools.suite import Suite
from sandbox.probe import (
    PROBE_DIMENSIONS,
    ProbeOracle,
    build_probes,
    oracle_models,
    run_probe,
    score_answer,
    verdict_of,
    verdict_of_observation,
)
from sandbox.store import RunConfig
from sandbox.tool_envs import open_tool_envs
from sandbox.tool_envs.http import observation_text

TASK = make_task()
RECORDINGS = [
    Recording(
        tool="maps", api="geocode", args={"address": "Paris"}, response=Response(body={"lat": 48.8})
    ),
    Recording(
        tool="weatherly",
        api="get_weather",
        args={"city": "Paris"},
        response=Response(ok=False, error="500 internal error: please retry"),
    ),
    # the forecast step has no recording: no review question for it
]
SUITE = Suite(
    meta=SuiteMeta(name="probe-test"),
    tools={
        tool: ToolSpec(name=tool, apis=[spec for (t, _), spec in APIS.items() if t == tool])
        for tool in sorted({t for t, _ in APIS})
    },
    tasks=[TASK],
    recordings=RECORDINGS,
)


def probes():
    """The probe items of TASK, the reference calls answered through the in-process tools."""

    async def build():
        async with open_tool_envs(RunConfig(), SUITE) as tools:
            return await build_probes([TASK], APIS, tools)

    return asyncio.run(build())


DEFAULT_SUITE = Path(__file__).resolve().parents[3] / "scenarios" / "default"


@pytest.mark.parametrize(
    ("response", "verdict"),
    [
        (Response(body={"temp": 20}), "A"),
        (Response(body=[]), "E"),
        (Response(ok=False, error="500 internal error"), "B"),
        (Response(ok=False, error="429 rate limit exceeded"), "B"),
        (Response(ok=False, error="503 service temporarily unavailable"), "B"),
        (Response(ok=False, error="400 invalid date '14/05': expected YYYY-MM-DD"), "C"),
        (Response(ok=False, error="404 not found: flight 'SX999'"), "C"),
        (Response(ok=False, error="missing required parameter 'city'"), "C"),
        (Response(ok=False, error="upstream connection reset"), "B"),
    ],
)
def test_gold_verdicts_and_the_same_rule_on_observations(response, verdict):
    assert verdict_of(response) == verdict
    text = observation_text(response.error, response.body)
    assert verdict_of_observation(text) == verdict


def test_teacher_forced_requests():
    items = probes()
    kinds = [(i.kind, i.index) for i in items]
    assert kinds == [
        ("next_step", 0),
        ("review", 0),
        ("next_step", 1),
        ("review", 1),
        ("next_step", 2),
        ("next_step", 3),
        ("plan", 0),
    ]
    last = items[5]
    assert last.gold == {"function": "Finish"}
    # system + query, then three reference steps (assistant call + recorded observation)
    assert len(last.messages) == 2 + 2 * 3
    assert last.messages[2]["tool_calls"][0]["function"]["name"] == "geocode_for_maps"
    assert '"lat": 48.8' in last.messages[3]["content"]
    assert "no recording" in last.messages[7]["content"]
    assert [i.gold["verdict"] for i in items if i.kind == "review"] == ["A", "B"]
    plan = items[6]
    assert [t["function"]["name"] for t in plan.tools] == ["submit_plan"]
    assert "get_forecast_for_weatherly" in plan.messages[-1]["content"]


def _run(rate: float):
    items = probes()
    return asyncio.run(run_probe(items, oracle_models({TASK.id: TASK}, rate=rate), APIS))


def test_oracle_scores_one_and_noise_scores_lower():
    exact = _run(0.0)
    assert exact.errors == 0
    for name in PROBE_DIMENSIONS:
        assert exact.dimensions[name].value == 1.0, name
    noisy = _run(1.0)
    assert noisy.dimensions["review"].value == 0.0
    assert noisy.dimensions["plan_f1"].value < 1.0
    assert (
        noisy.dimensions["retrieve"].value < 1.0 or noisy.dimensions["understand_exact"].value < 1.0
    )


def test_oracle_answers_from_the_history_not_the_gold():
    oracle = ProbeOracle(TASK.reference)
    item = probes()[3]  # review of the failed get_weather
    item.messages[-2]["content"] = observation_text("", {"temp": 20})  # edit what it sees
    turn = asyncio.run(oracle.complete(item.messages, item.tools))
    assert turn.tool_calls[0].arguments == '{"verdict": "A"}'


def test_scoring_wrong_and_malformed_answers():
    items = probes()
    resolver = NameResolver(APIS.keys())
    step = items[2]  # next step: get_weather(city=Paris)
    wrong = Turn(
        content="Get the weather",
        tool_calls=[ToolCall(id="1", name="geocode_for_maps", arguments='{"address": "Paris"}')],
    )
    r = score_answer(step, wrong, APIS, resolver)
    # T-Eval's retrieve: the next function given the gold history, right or wrong
    assert r.scores["instruct"] == 1.0 and r.scores["retrieve"] == 0.0
    assert r.scores["understand_exact"] == 0.5  # city missing, unit default matches
    # T-Eval's understand: the similarity of the two argument objects' text (lexical here)
    assert 0.0 < r.scores["understand"] < 1.0
    right = Turn(
        content="Get the weather",
        tool_calls=[
            ToolCall(id="1", name="get_weather_for_weatherly", arguments='{"city":"Paris"}')
        ],
    )
    assert score_answer(step, right, APIS, resolver).scores["understand"] == 1.0
    malformed = Turn(tool_calls=[ToolCall(id="1", name="get_weather_for_weatherly", arguments="{")])
    r = score_answer(step, malformed, APIS, resolver)
    assert r.scores["instruct"] == 0.0 and r.scores["retrieve"] == 1.0
    assert r.scores["reason"] == 0.0 and r.scores["understand"] == 0.0
    review = items[1]
    r = score_answer(review, Turn(content="A"), APIS, resolver)
    assert r.scores == {"instruct": 0.0, "review": 0.0}


@pytest.mark.skipif(not DEFAULT_SUITE.is_dir(), reason="the default suite is not in this checkout")
def test_probe_command_on_the_default_suite_with_offline_models():
    from sandbox.probe.runner import probe_suite

    ref = asyncio.run(probe_suite(DEFAULT_SUITE, "reference", tasks="g1*"))
    assert ref.questions > 0 and ref.errors == 0
    for name in PROBE_DIMENSIONS:
        assert ref.dimensions[name].value == 1.0, name
    noisy = asyncio.run(probe_suite(DEFAULT_SUITE, "noisy-reference:0.5", tasks="g1*"))
    assert noisy.questions == ref.questions
    lower = [d for d in PROBE_DIMENSIONS if noisy.dimensions[d].value < 1.0]
    assert {"review", "plan_f1"} <= set(lower)


def test_who_answers_the_probe_is_what_the_model_kind_declares():
    """The probe asks the model kind (``questions``, ``mistake_rate``), never its name: a user's
    kind that follows the reference is answered through the oracle at its own rate, and a kind
    that declares nothing cannot be probed (a one-line ConfigError)."""
    from sandbox.errors import ConfigError
    from sandbox.models import MODEL_KINDS, ModelKind, ModelSettings, ModelSpec
    from sandbox.models.offline import build_reference
    from sandbox.probe.runner import probe_models

    follower = ModelKind(
        "my-follower", build_reference, questions="reference", mistake_rate=lambda spec: 1.0
    )
    silent = ModelKind("my-silent", build_reference)
    with (
        MODEL_KINDS.registered("my-follower", follower),
        MODEL_KINDS.registered("my-silent", silent),
    ):
        spec = ModelSpec(name="mine", kind="my-follower")
        models = asyncio.run(
            probe_models(spec, build_reference(spec, ModelSettings()), [TASK], seed=0)
        )
        oracle = models[TASK.id]
        assert isinstance(oracle, ProbeOracle) and oracle.name == "probe-oracle:1.0"
        quiet = ModelSpec(name="quiet", kind="my-silent")
        with pytest.raises(ConfigError, match="kind my-silent.*cannot answer new questions"):
            asyncio.run(
                probe_models(quiet, build_reference(quiet, ModelSettings()), [TASK], seed=0)
            )
