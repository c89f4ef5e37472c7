"""How an external episode ends: what its scope saw first, else how the agent exited.

In order, the first that holds decides (status, end reason):

1. the agent called ``Finish`` (``/call`` or MCP): ``answered`` / ``gave_up``;
2. the scope ended the episode: in a conversation the user ending it (``done``: ``answered``
   with the agent's last reply; another signal: ``gave_up``) or failing (``error``, the
   user's: ``user_failure:<kind>``), an answer printed while the user had not ended it
   (``gave_up``, ``left_conversation``); a spent budget (``budget_exhausted``,
   ``budget:<limit>``), a model or tool failure that survived the retries (``error``, an
   infrastructure error: ``model_error:<kind>``, ``tool_infra:<provenance>``...), a replay
   that left its recording (``error``, ``replay_divergence``);
3. the deadline: the budget's ``--max-seconds`` (``budget_exhausted``, ``budget:max_seconds``)
   or the strategy's ``timeout`` (``error``, ``agent_timeout``);
4. an HTTP agent that could not be reached (``error``, ``agent_unreachable``: an
   infrastructure error, so ``--resume`` runs it again);
5. the agent exited 0 and the last line of its stdout is ``{"answer": "..."}`` (``answered``)
   or ``{"give_up": true}`` (``gave_up``, with its ``answer`` or ``reason`` as explanation);
6. any other exit: ``error`` with an error of the agent's own (never an infrastructure
   error, so it counts as unsolved): ``agent_crashed`` (a non-zero exit or a signal),
   ``agent_answer_too_long`` (exit 0 with a last line longer than ``STDOUT_KEPT``, 4 MiB: the
   line is not read) or ``agent_no_answer`` (exit 0 without an answer), its message ending
   with the agent's stderr.

Imports the agents' records and ``sandbox.external`` modules.
"""

from __future__ import annotations

import json
import signal
from typing import Any

from agents.step import EpisodeEnd
from agents.toolenv import GIVE_ANSWER, GIVE_UP
from agents.trajectory import ErrorRecord, FinishCall, Status
from sandbox.external.process import STDOUT_KEPT, AgentExit
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope

__all__ = ["answer_line", "decide_end", "process_record"]

TOO_LONG = f"its last line of stdout is longer than {STDOUT_KEPT} bytes, the most an answer may be"
STDERR_IN_MESSAGE = 1000
"""Characters of the stderr's end quoted in an error message (the trajectory keeps more)."""


def answer_line(stdout: str, *, cut: bool = False) -> FinishCall | str:
    """The answer the last line of stdout gives, or why it gives none (``cut``: ``stdout`` is
    the end of a longer output, whose last line may have lost its beginning)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return "nothing was printed on stdout"
    if cut and "\n" not in stdout.strip():
        return TOO_LONG
    last = lines[-1].strip()
    try:
        data: Any = json.loads(last)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("give_up") is True:
        why = data.get("answer", data.get("reason"))
        return FinishCall(return_type=GIVE_UP, final_answer=why if isinstance(why, str) else "")
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        return FinishCall(return_type=GIVE_ANSWER, final_answer=data["answer"])
    shown = last if len(last) <= 200 else last[:197] + "..."
    return f'the last line of stdout is not {{"answer": "..."}} or {{"give_up": true}}: {shown!r}'


def _finished(finish: FinishCall) -> EpisodeEnd:
    if finish.return_type == GIVE_ANSWER:
        return EpisodeEnd(Status.answered, "answered", [], finish.final_answer)
    return EpisodeEnd(Status.gave_up, "gave_up", [], finish.final_answer or None)


def _with_stderr(message: str, stderr: str) -> str:
    tail = stderr.strip()[-STDERR_IN_MESSAGE:]
    return f"{message}; its stderr ends with:\n{tail}" if tail else f"{message} (stderr empty)"


def _how_it_exited(agent: AgentExit) -> str:
    if agent.signal is not None:
        name = signal.Signals(agent.signal).name if agent.signal in _SIGNALS else agent.signal
        return f"the agent was killed by signal {name}"
    return f"the agent exited with code {agent.exit_code}"


_SIGNALS = {s.value for s in signal.Signals}


def decide_end(scope: EpisodeScope, record: EpisodeRecord, agent: AgentExit) -> EpisodeEnd:
    """The episode's end (see the module docstring); errors it implies are recorded."""
    errors = record.trajectory.errors
    if scope.finished is not None:
        return _finished(scope.finished)
    if scope.stop is not None:
        return EpisodeEnd(scope.stop.status, scope.stop.reason, [], scope.final_answer)
    if agent.timed_out == "budget":
        return EpisodeEnd(Status.budget_exhausted, "budget:max_seconds", [])
    if agent.timed_out == "timeout":
        message = _with_stderr("the agent did not finish within its timeout", agent.stderr)
        errors.append(ErrorRecord(kind="agent", message=message))
        return EpisodeEnd(Status.error, "agent_timeout", [])
    if agent.unreachable is not None:
        message = f"cannot reach the agent: {agent.unreachable}"
        errors.append(ErrorRecord(kind="infra", message=message))
        return EpisodeEnd(Status.error, "agent_unreachable", [])
    answer = answer_line(agent.stdout, cut=agent.stdout_cut) if agent.exit_code == 0 else None
    if isinstance(answer, FinishCall):
        record.finish(answer)
        return _finished(answer)
    if answer == TOO_LONG:
        message = _with_stderr(f"the agent's answer was not read: {answer}", agent.stderr)
        errors.append(ErrorRecord(kind="agent", message=message))
        return EpisodeEnd(Status.error, "agent_answer_too_long", [])
    if agent.exit_code == 0:
        message = _with_stderr(f"the agent exited without an answer ({answer})", agent.stderr)
        errors.append(ErrorRecord(kind="agent", message=message))
        return EpisodeEnd(Status.error, "agent_no_answer", [])
    message = _with_stderr(f"{_how_it_exited(agent)} before answering", agent.stderr)
    errors.append(ErrorRecord(kind="agent", message=message))
    return EpisodeEnd(Status.error, "agent_crashed", [])


def process_record(agent: AgentExit, where: dict[str, str]) -> dict[str, Any]:
    """What the trajectory keeps of the agent's run (``tree["external"]``)."""
    last = next((ln for ln in reversed(agent.stdout.splitlines()) if ln.strip()), "")
    return {
        **where,
        "exit_code": agent.exit_code,
        "signal": agent.signal,
        "timed_out": agent.timed_out,
        "stopped": agent.stopped,
        "seconds": round(agent.seconds, 3),
        "stdout_last_line": last[-1000:],
        "stderr_tail": agent.stderr,
    }
