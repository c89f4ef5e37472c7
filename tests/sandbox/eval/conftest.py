"""Fixtures of the evaluation tests: the fake ToolEval judge on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tooleval_judge_server import ToolEvalJudgeServer


@pytest.fixture(scope="session")
def judge_server_session() -> Iterator[ToolEvalJudgeServer]:
    with ToolEvalJudgeServer() as server:
        yield server


@pytest.fixture
def judge_server(judge_server_session: ToolEvalJudgeServer) -> ToolEvalJudgeServer:
    """The session's fake judge, its script and log cleared."""
    judge_server_session.clear()
    return judge_server_session
