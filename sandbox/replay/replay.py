"""Offline replay of a stored run: does the same run, re-executed, give the same trajectories?

Two checks, both without a model endpoint or network:

- ``agent`` (default): re-run the run's own config (agent, budgets, suite, faults) with the
  ``replay`` model, which answers each request with the recorded assistant turn, and compare the
  new trajectories node by node with the recorded ones: every tool observation, every turn, the
  final status and answer. A run whose tools were live (``--tools-url``, or ``--mcp-server``
  without ``--record-into``) is replayed on its own recorded observations (the ``recorded`` tool
  transport), so its replay needs neither the model nor that server.
- ``calls``: re-issue every recorded tool call of every branch, in the order it was made, against
  the suite's mock tools (one fresh session per episode, in the run's recordings scope) and
  compare each observation. A call's name is dispatched by the env's rule, as the agents do
  (``agents.toolenv.dispatch``). This checks the recordings alone, and works for trajectories
  whose search order our agents do not reproduce (e.g. imported from another framework).

In a world, each call's state hash is compared first: a call that left another state than
recorded (the world's code or state changed) is the first difference, named with the paths
its writes left differently (``calls[k].state``). Observations are compared by content
(``same_observation``): equal text, or the same decoded ``{error, response}``, where a side
that was cut (ToolBench cut observations at 1024 characters)
must be a prefix of the other. Exact text matches are counted apart (``calls_exact``). The first
difference of a divergent episode is reported as ``StepDiff`` (node, field, expected, got).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from agents.models.replay import node_difference
from agents.step import function_name
from agents.toolenv import ToolEnv, dispatch, env_dispatch
from agents.trajectory import Node, StepCall, Trajectory, user_answers
from agents.user import UserTurn
from mock_tools import MockToolsError, Suite, load_suite
from mock_tools.worlds.paths import flatten
from sandbox.errors import RunError
from sandbox.interop.observations import same_observation
from sandbox.run import run_suite_async, select_tasks
from sandbox.store import RunConfig, RunStore, read_trajectories
from sandbox.tool_envs import open_tool_envs
from sandbox.users import UserRecord, default_user_model, record_key

__all__ = [
    "EpisodeVerdict",
    "ReplayReport",
    "StepDiff",
    "compare_trajectories",
    "replay_calls",
    "replay_run",
    "replay_run_async",
]

ReplayMode = Literal["agent", "calls"]
_UNSENT = ("invalid", "unknown")
"""Observation provenances of calls the agent never sent to the tools."""


class StepDiff(BaseModel):
    node: int | None = Field(description="Node id of the first difference (None: episode level).")
    field: str
    expected: Any = None
    got: Any = None

    def describe(self) -> str:
        where = f"node {self.node}" if self.node is not None else "episode"
        return f"{where}, {self.field}: expected {_short(self.expected)}, got {_short(self.got)}"


class EpisodeVerdict(BaseModel):
    scenario_id: str
    trial: int = 0
    calls_checked: int = 0
    calls_matched: int = 0
    calls_exact: int = Field(default=0, description="Matched with identical text.")
    first_diff: StepDiff | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """Reproduced: no difference found."""
        return self.first_diff is None

    @classmethod
    def not_replayed(cls, traj: Trajectory, field: str, expected: Any) -> EpisodeVerdict:
        """An episode that could not be replayed at all (no re-run, no task)."""
        return cls(
            scenario_id=traj.scenario_id,
            trial=traj.trial,
            first_diff=StepDiff(node=None, field=field, expected=expected, got=None),
        )


class ReplayReport(BaseModel):
    run: str
    mode: ReplayMode
    episodes: int = 0
    divergent: int = 0
    calls_checked: int = 0
    calls_matched: int = 0
    calls_exact: int = 0
    suite_changed: bool = Field(
        default=False, description="The suite's fingerprint differs from the run's."
    )
    verdicts: list[EpisodeVerdict] = Field(default_factory=list)
    replay_run: str | None = Field(default=None, description="Where the re-run was written.")
    unrecorded: list[str] = Field(
        default_factory=list,
        description="Episodes (task#trial) the run's manifest lists that have no trajectory (a "
        "run cut short): nothing to replay, and said so.",
    )

    @property
    def ok(self) -> bool:
        return self.divergent == 0


# -- comparison ----------------------------------------------------------------------------------


def compare_trajectories(expected: Trajectory, got: Trajectory) -> EpisodeVerdict:
    """Node-by-node comparison; timings, token counts and ids of the run are ignored."""
    verdict = EpisodeVerdict(scenario_id=expected.scenario_id, trial=expected.trial)
    for i, want in enumerate(expected.nodes):
        if i >= len(got.nodes):
            verdict.first_diff = StepDiff(node=want.id, field="node", expected=want.kind, got=None)
            break
        have = got.nodes[i]
        for c_want, c_have in zip(want.calls, have.calls, strict=False):
            verdict.calls_checked += 1
            a, b = c_want.observation, c_have.observation
            if a is not None and b is not None:
                verdict.calls_exact += int(a.content == b.content)
                verdict.calls_matched += int(_same(a.content, b.content))
        diff = _node_diff(want, have)
        if diff is not None:
            verdict.first_diff = diff
            break
    else:
        if len(got.nodes) > len(expected.nodes):
            extra = got.nodes[len(expected.nodes)]
            verdict.first_diff = StepDiff(
                node=extra.id, field="node", expected=None, got=extra.kind
            )
    if verdict.first_diff is None:
        for field in ("status", "final_answer", "chosen_path"):
            a, b = getattr(expected, field), getattr(got, field)
            if a != b:
                verdict.first_diff = StepDiff(node=None, field=field, expected=a, got=b)
                break
    return verdict


def _node_diff(want: Node, have: Node) -> StepDiff | None:
    diff = node_difference(want, have)
    if diff is not None:
        return StepDiff(node=want.id, field=diff[0], expected=diff[1], got=diff[2])
    for k, (a, b) in enumerate(zip(want.calls, have.calls, strict=True)):
        state = _state_diff(a, b)
        if state is not None:
            return StepDiff(
                node=want.id, field=f"calls[{k}].state", expected=state[0], got=state[1]
            )
        ok_a = a.observation.ok if a.observation else None
        ok_b = b.observation.ok if b.observation else None
        if ok_a != ok_b:
            return StepDiff(node=want.id, field=f"calls[{k}].ok", expected=ok_a, got=ok_b)
        text_a = a.observation.content if a.observation else None
        text_b = b.observation.content if b.observation else None
        if not _same(text_a, text_b):
            return StepDiff(
                node=want.id, field=f"calls[{k}].observation", expected=text_a, got=text_b
            )
    return None


def _state_diff(want: StepCall, have: StepCall) -> tuple[Any, Any] | None:
    """Where a call in a world left another state than recorded: each side's state hash and
    the paths its changes wrote that the other side's did not write alike."""
    a, b = want.observation, have.observation
    if a is None or b is None or a.state == b.state:
        return None
    mine, theirs = _written(a.changes), _written(b.changes)
    paths = sorted(p for p in {*mine, *theirs} if mine.get(p, _NONE) != theirs.get(p, _NONE))
    return (
        {"state": (a.state or "")[:12], "paths": paths[:20]},
        {"state": (b.state or "")[:12], "paths": paths[:20]},
    )


_NONE = object()


def _written(changes: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Leaf path -> value of what a call's changes left (absent records as ``None``)."""
    out: dict[str, Any] = {}
    for c in changes or []:
        where = f"{c.get('collection')}.{c.get('id')}"
        after = c.get("after")
        out.update(flatten(after, where) if after is not None else {where: None})
    return out


def _same(expected: str | None, got: str | None) -> bool:
    if expected is None or got is None:
        return expected is got
    return expected == got or same_observation(expected, got)


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- agent-level replay --------------------------------------------------------------------------


def replay_run(
    run: str | Path,
    *,
    tasks: Sequence[str] = (),
    mode: ReplayMode = "agent",
    out: str | Path | None = None,
) -> ReplayReport:
    """Replay a stored run offline and report, per episode, whether it was reproduced."""
    return asyncio.run(replay_run_async(run, tasks=tasks, mode=mode, out=out))


async def replay_run_async(
    run: str | Path,
    *,
    tasks: Sequence[str] = (),
    mode: ReplayMode = "agent",
    out: str | Path | None = None,
) -> ReplayReport:
    store = RunStore.open(run)
    suite = _load_suite(store)
    recorded = read_trajectories(store.path)
    listed = store.manifest.episode_keys()
    if tasks:
        wanted = {t.id for t in select_tasks(suite.tasks, tasks)}
        recorded = [t for t in recorded if t.scenario_id in wanted]
        listed = [k for k in listed if k[0] in wanted]
    if not recorded:
        raise RunError(f"{store.path}: no recorded episodes to replay")
    have = {(t.scenario_id, t.trial) for t in recorded}
    report = ReplayReport(
        run=str(store.path),
        mode=mode,
        unrecorded=[f"{task}#{trial}" for task, trial in listed if (task, trial) not in have],
        suite_changed=bool(store.manifest.suite.fingerprint)
        and store.manifest.config.offline() is store.manifest.config  # else a recorded suite
        and store.manifest.suite.fingerprint != suite.fingerprint,
    )
    if mode == "calls":
        verdicts = await replay_calls(store, suite, recorded)
    else:
        verdicts, report.replay_run = await _replay_agent(store, recorded, out)
    report.verdicts = verdicts
    report.episodes = len(verdicts)
    report.divergent = sum(not v.ok for v in verdicts)
    report.calls_checked = sum(v.calls_checked for v in verdicts)
    report.calls_matched = sum(v.calls_matched for v in verdicts)
    report.calls_exact = sum(v.calls_exact for v in verdicts)
    return report


async def _replay_agent(
    store: RunStore, recorded: list[Trajectory], out: str | Path | None
) -> tuple[list[EpisodeVerdict], str | None]:
    base: RunConfig = store.manifest.config.offline()
    if base.tools.url or base.tools.mcp_server:
        # Its tools were live (a server that may be gone): its own observations answer.
        base = base.with_values(
            {"tools.url": None, "tools.mcp_server": None, "tools.replay": str(store.path)}
        )
    ids = sorted({t.scenario_id for t in recorded})
    with tempfile.TemporaryDirectory(prefix="sandbox-replay-") as tmp:
        users = _recorded_users(store, recorded, base, Path(tmp) / "users.jsonl")
        config = base.with_values(
            {
                "user.record": str(users),
                "user.miss": "error",  # a replay never asks a user model
                "model.name": f"replay:{store.path}",
                "output.out": str(out or tmp),
                "output.run_id": None,
                "tasks": ids,
                "trials": max(t.trial for t in recorded) + 1,
                "suite": str(_suite_dir(store)),
                "executor.name": "local",
                "executor.ray_address": None,
            }
        )
        result = await run_suite_async(config, show_progress=False)
        replayed = {(t.scenario_id, t.trial): t for t in read_trajectories(result.path)}
    verdicts = []
    for want in recorded:
        got = replayed.get((want.scenario_id, want.trial))
        if got is None:
            verdicts.append(EpisodeVerdict.not_replayed(want, "episode", "run"))
            continue
        verdict = compare_trajectories(want, got)
        diverged = [e.message for e in got.errors if e.kind == "internal"]
        if verdict.first_diff is not None and diverged:
            # A replay model that could not follow the recording says where in its error.
            verdict.first_diff.got = f"{verdict.first_diff.got!r} ({diverged[-1]})"
        verdicts.append(verdict)
    return verdicts, (result.path if out else None)


def _recorded_users(
    store: RunStore, recorded: list[Trajectory], config: RunConfig, path: Path
) -> Path:
    """A user record holding every answer the recorded run's users gave, by the transcript each
    answered: the replay's users answer from it alone."""
    record = UserRecord(path)
    try:
        tasks = {t.id: t for t in load_suite(_suite_dir(store)).tasks}
    except MockToolsError:
        return path
    for traj in recorded:
        task = tasks.get(traj.scenario_id)
        if task is None or task.user is None:
            continue
        name = default_user_model(task, config.user.model)
        for seen, node in user_answers(traj):
            turn = UserTurn(
                content=node.content or "", **(node.user or {}), usage=node.usage, calls=node.calls
            )
            record.put(record_key(task, name, seen), task.id, name, turn)
    return path


# -- call-level replay ---------------------------------------------------------------------------


async def replay_calls(
    store: RunStore, suite: Suite, recorded: list[Trajectory]
) -> list[EpisodeVerdict]:
    """Re-issue every sent call of every node, in node order, and compare the observations.

    The calls go to the suite itself (in process), never to a server the run may have used (an
    MCP run recorded into a suite: that suite)."""
    config: RunConfig = store.manifest.config.offline().with_values(
        {"tools.url": None, "tools.mcp_server": None, "tools.record_into": None}
    )
    tasks = {t.id: t for t in suite.tasks}
    verdicts: list[EpisodeVerdict] = []
    async with open_tool_envs(config, suite) as tools:
        for traj in recorded:
            task = tasks.get(traj.scenario_id)
            if task is None:
                verdicts.append(EpisodeVerdict.not_replayed(traj, "task", traj.scenario_id))
                continue
            session = f"replay/{traj.run_id}/{traj.scenario_id}/{traj.trial}"
            env = tools.for_episode(task, session=session)
            verdicts.append(await _replay_episode_calls(env, traj))
            await env.reset()
    return verdicts


async def _replay_episode_calls(env: ToolEnv, traj: Trajectory) -> EpisodeVerdict:
    verdict = EpisodeVerdict(scenario_id=traj.scenario_id, trial=traj.trial)
    names = [function_name(f) for f in env.functions]
    rule = env_dispatch(env)
    for node in sorted(traj.nodes, key=lambda n: n.id):
        for k, call in enumerate(node.calls):
            obs = call.observation
            if obs is None or obs.provenance in _UNSENT or call.args is None:
                continue
            if node.kind == "user":  # the user's own tool (dual control)
                got = await env.call_as_user(call.name, call.args)  # type: ignore[attr-defined]
            else:
                target = dispatch(call.name, names, rule) or call.name
                got = await env.call(target, call.args)
            verdict.calls_checked += 1
            verdict.calls_exact += int(got.content == obs.content)
            if got.ok == obs.ok and _same(obs.content, got.content):
                verdict.calls_matched += 1
            elif verdict.first_diff is None:
                verdict.first_diff = StepDiff(
                    node=node.id,
                    field=f"calls[{k}].observation ({call.name})",
                    expected=obs.content,
                    got=got.content,
                )
    return verdict


# -- helpers -------------------------------------------------------------------------------------


def _suite_dir(store: RunStore) -> Path:
    """The suite a replay runs on: the run's, or the suite an MCP run was recorded into."""
    config = store.manifest.config
    offline = config.offline()
    return store.suite_path(offline.suite if offline is not config else None)


def _load_suite(store: RunStore) -> Suite:
    try:
        return load_suite(_suite_dir(store))
    except MockToolsError as e:
        raise RunError(f"cannot load the suite of run {store.manifest.run_id}: {e}") from e
