"""The evaluation options ``eval``, ``rescore`` and ``compare`` share: the protocol and its judge.

``add_protocol_options(parser)`` adds ``--protocol`` (choices from the protocol registry),
``--judge`` and the ``--judge-*`` settings; ``settings_from_args`` makes the ``JudgeSettings``;
``open_judge`` builds the judge client (``sandbox.models.remote.openai_client``: the model layer
prices it), probes its endpoint once and closes it, with its SQLite request cache.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agents.errors import ModelError
from sandbox.errors import ConfigError, ModelUnreachableError
from sandbox.eval.judge import Judge
from sandbox.eval.protocol import EvalProtocol, JudgeSettings
from sandbox.eval.protocols import DEFAULT_PROTOCOL, get_protocol, protocol_names
from sandbox.models import RequestCache, resolve_model
from sandbox.models.remote import openai_client

__all__ = [
    "JUDGE_CACHE_FILE",
    "add_protocol_options",
    "build_judge_model",
    "judge_errors",
    "open_judge",
    "protocol_from_args",
    "settings_from_args",
]

JUDGE_CACHE_FILE = "judge_cache.sqlite"


def add_protocol_options(parser: argparse.ArgumentParser, *, cache_default: str) -> None:
    group = parser.add_argument_group("evaluation protocol and judge")
    group.add_argument(
        "--protocol",
        default=DEFAULT_PROTOCOL,
        choices=protocol_names(),
        help="default: checks, rules, then a judge (the project's); toolbench: ToolEval "
        "(StableToolBench) label for label, needs --judge; toolbench-normalized: toolbench's "
        "pass rate with ToolEval's normalized preference (docs/evaluation.md)",
    )
    group.add_argument(
        "--judge",
        metavar="MODEL",
        default=None,
        help="LLM judge: an alias from models.yaml or openai:<model>@<base_url>",
    )
    group.add_argument(
        "--judge-samples",
        type=int,
        default=None,
        metavar="K",
        help="judge samples per episode (default: the protocol's; toolbench 4, default 3)",
    )
    group.add_argument(
        "--judge-rounds",
        type=int,
        default=None,
        metavar="R",
        help="preference rounds per paired episode (default: toolbench 2, default 1)",
    )
    group.add_argument(
        "--judge-temperature",
        type=float,
        default=None,
        metavar="T",
        help="the judge's sampling temperature (default 0.2, ToolEval's)",
    )
    group.add_argument(
        "--judge-order",
        choices=["alternate", "random"],
        default="alternate",
        help="answer order per preference round: alternate (seeded start, cancels position "
        "bias) or random (ToolEval's shuffle, seeded)",
    )
    group.add_argument(
        "--judge-cache",
        default=None,
        metavar="PATH",
        help=f"SQLite cache of the judge's answers (default: {cache_default})",
    )
    group.add_argument("--no-judge-cache", action="store_true", help="always ask the judge")


def protocol_from_args(args: argparse.Namespace) -> EvalProtocol:
    """The chosen protocol, checked against the judge options before any work starts."""
    protocol = get_protocol(args.protocol)
    for flag, value in (
        ("--judge-samples", args.judge_samples),
        ("--judge-rounds", args.judge_rounds),
    ):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be at least 1")
    if args.judge_temperature is not None and args.judge_temperature < 0:
        raise ConfigError("--judge-temperature must not be negative")
    if protocol.judge_required and args.judge is None:
        raise ConfigError(
            f"--protocol {protocol.name} needs a judge: add --judge MODEL (an alias from "
            "models.yaml or openai:<model>@<base_url>)"
        )
    return protocol


def settings_from_args(args: argparse.Namespace) -> JudgeSettings:
    return JudgeSettings(
        samples=args.judge_samples,
        rounds=args.judge_rounds,
        temperature=args.judge_temperature,
        order=args.judge_order,
    )


def build_judge_model(name: str) -> Any:
    """An OpenAI-compatible client for the judge, resolved through the model registry."""
    spec = resolve_model(name, env=os.environ)
    if not spec.remote or not spec.model or not spec.base_url:
        raise ConfigError(
            f"the judge must be an OpenAI-compatible model (got {name!r}, kind {spec.kind}); "
            "use an alias such as gpt-4o-mini or openai:<model>@<base_url>"
        )
    return openai_client(spec)


@asynccontextmanager
async def open_judge(
    args: argparse.Namespace, protocol: EvalProtocol, cache_path: Path
) -> AsyncIterator[Judge | None]:
    """The judge of ``--judge`` (None without one), probed once, closed on exit."""
    if args.judge is None:
        yield None
        return
    model = build_judge_model(args.judge)
    cache = None if args.no_judge_cache else RequestCache(args.judge_cache or cache_path)
    try:
        try:
            await model.probe()
        except ModelError as e:
            raise ModelUnreachableError(
                f"judge {args.judge!r} is unreachable: {e}\n  start an OpenAI-compatible server "
                "or point --judge at another one (openai:<model>@<base_url>)"
            ) from e
        temperature = args.judge_temperature
        if temperature is None:
            temperature = protocol.defaults.temperature or 0.0
        yield Judge(model, cache=cache, temperature=temperature)
    finally:
        await model.aclose()
        if cache is not None:
            cache.close()


def judge_errors(labels: list[Any], outcomes: list[Any]) -> list[str]:
    """Episodes the judge could not label or compare (infrastructure errors of the evaluation)."""
    out = [f"label {lb.episode}" for lb in labels if lb.excluded == "judge_error"]
    for o in outcomes:
        if o.judge_error is not None:
            out.append(f"comparison {o.task_id}" + (f"#{o.trial}" if o.trial else ""))
    return out
