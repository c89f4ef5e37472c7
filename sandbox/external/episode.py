"""``run_external``: one episode of an external agent, from its task to its trajectory.

1. The episode's record and scope are made (``sandbox.external.record``, ``.scope``): the tools
   offered are the env's functions and ``Finish``, exactly as the built-in loops offer them.
2. Its server starts (``sandbox.external.gateway``): the model proxy, ``/call``, MCP and the
   suite's REST routes under a per-episode token on 127.0.0.1.
3. The agent runs (``sandbox.external.process``): the command with the task as one JSON line
   on stdin (``task_id``, ``trial``, ``seed``, ``run_id``, ``query``, ``tools``,
   ``system_prompt``, ``conversation``) and the episode's URLs in its environment, or the URL
   POSTed the same object with those variables under ``env``. Its deadline is the budget's
   ``max_seconds``, else the strategy's ``timeout``.
4. The server stops, the agent's process group is gone, and the end is decided
   (``sandbox.external.ending``). In a conversation the user had not ended, an answer the
   agent printed as it exited is its last reply, which the user answers first. A bug or a
   harness error met while answering the agent is raised here, as it would be from a built-in
   loop.

May import ``agents`` and ``sandbox.external`` modules.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.toolenv import FINISH_FUNCTION, GIVE_ANSWER, ToolEnv, env_dispatch
from agents.trajectory import Component, FinishCall, Trajectory
from agents.user import User
from sandbox.external.ending import answer_line, decide_end, process_record
from sandbox.external.gateway import EpisodeUrls, episode_server
from sandbox.external.http_agent import call_url
from sandbox.external.options import ExternalOptions
from sandbox.external.peer import EpisodeProcesses
from sandbox.external.process import AgentExit, Limits, Timeout, run_command
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope

__all__ = ["run_external", "task_input"]


def task_input(
    meta: EpisodeMeta,
    query: str,
    functions: list[dict[str, Any]],
    options: ExternalOptions,
    *,
    conversation: bool = False,
) -> dict[str, Any]:
    """The JSON object the agent gets on stdin."""
    return {
        "task_id": meta.scenario_id,
        "trial": meta.trial,
        "seed": meta.seed,
        "run_id": meta.run_id,
        "query": query,
        "tools": functions,
        "system_prompt": options.system_prompt,
        "conversation": conversation,
    }


def _model_params(model: Model) -> dict[str, Any]:
    params = getattr(model, "params", None)
    return dict(params) if isinstance(params, dict) else {}


async def run_external(
    name: str,
    options: ExternalOptions,
    *,
    model: Model,
    env: ToolEnv,
    query: str,
    budget: Budget,
    meta: EpisodeMeta,
) -> Trajectory:
    """Run one episode of the external agent (see the module docstring); ``name`` is the
    strategy's, as the trajectory records it."""
    started = time.monotonic()
    functions = [*env.functions, FINISH_FUNCTION]
    user: User | None = getattr(env, "user", None)
    record = EpisodeRecord(
        agent=Component(name=name, params=options.model_dump(mode="json")),
        model=Component(name=model.name, params=_model_params(model)),
        meta=meta,
        query=query,
        functions=functions,
        dispatch=env_dispatch(env),
        hidden=user.hidden if user is not None else (),
    )
    scope = EpisodeScope(
        model=model,
        env=env,
        record=record,
        budget=budget,
        max_observation_chars=options.max_observation_chars,
        depth_unit=options.depth_unit,
    )
    offered = record.offered()[0]
    given = task_input(meta, query, offered, options, conversation=user is not None)
    async with episode_server(scope) as urls:
        agent = await _run_agent(options, given, urls, scope, budget, started)
    if scope.fatal is not None:
        raise scope.fatal
    if user is not None and not scope.over and agent.exit_code == 0:
        last = answer_line(agent.stdout)
        if isinstance(last, FinishCall) and last.return_type == GIVE_ANSWER:
            await scope.last_reply(last)
    end = decide_end(scope, record, agent)
    where = {"command": options.command} if options.command else {"url": options.url or ""}
    return record.close(
        end,
        wall_seconds=time.monotonic() - started,
        process=process_record(agent, where),
    )


async def _run_agent(
    options: ExternalOptions,
    given: dict[str, Any],
    urls: EpisodeUrls,
    scope: EpisodeScope,
    budget: Budget,
    started: float,
) -> AgentExit:
    kind: Timeout = "budget" if budget.max_seconds is not None else "timeout"
    seconds = budget.max_seconds if budget.max_seconds is not None else options.timeout
    limits = Limits(started + seconds, kind, scope.ended, options.grace, options.stderr_chars)
    if options.command:
        line = json.dumps(given, ensure_ascii=False) + "\n"

        def bind(agent: EpisodeProcesses) -> None:
            if options.bind_process:  # from now on, only its processes are answered
                scope.agent = agent

        return await run_command(
            options.command,
            limits,
            stdin=line.encode("utf-8"),
            env={**os.environ, **urls.environment()},
            cwd=options.cwd,
            marker=urls.marker(),
            on_start=bind,
        )
    assert options.url is not None
    return await call_url(options.url, {**given, "env": urls.environment()}, limits)
