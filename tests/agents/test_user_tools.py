"""Dual control on the user's side: a user model offered tools of its own calls them before it
answers (``ModelUser``), the calls are the turn's and its later transcripts show them, a record
replays them (``RecordedUser``), and the keys of records made before dual control still hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.model import Message, ToolCall, Turn
from agents.toolenv import Observation
from agents.trajectory import Node, StepCall, transcript_for
from agents.user import transcript_key
from agents.users.model_user import MAX_TOOL_ROUNDS, ModelUser
from agents.users.persona import PersonaUserModel
from mock_tools.conversation import Persona, TaskUser
from mock_tools.models import Task
from sandbox.users.record import RecordedUser, UserRecord
from tests.agents.scripted import ScriptedModel

SWITCH = {
    "type": "function",
    "function": {
        "name": "toggle_roaming",
        "description": "Turn data roaming on or off.",
        "parameters": {"type": "object", "properties": {}},
    },
}
OPENING: list[Message] = [
    {"role": "user", "content": "My data does not work abroad."},
    {"role": "assistant", "content": "Could you please toggle roaming on your phone?"},
]


class Phone:
    """``UserTools`` over a dict: each toggle flips the switch and answers the new state."""

    def __init__(self, *, infra: bool = False) -> None:
        self.roaming = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.infra = infra

    @property
    def functions(self) -> list[dict[str, Any]]:
        return [SWITCH]

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        self.calls.append((name, args))
        if self.infra:
            return Observation(ok=False, content="down", error="down", infra=True)
        self.roaming = not self.roaming
        text = json.dumps({"error": "", "response": {"roaming": self.roaming}})
        return Observation(ok=True, content=text, state=f"s{len(self.calls)}")


def toggle(_id: str = "t1", arguments: str = "{}") -> Turn:
    return Turn(tool_calls=[ToolCall(id=_id, name="toggle_roaming", arguments=arguments)])


async def test_a_user_calls_its_tool_sees_the_result_and_then_answers() -> None:
    model = ScriptedModel([toggle(), Turn(content="Done, roaming is on now.")])
    phone = Phone()
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert turn.failure is None
    assert turn.content == "Done, roaming is on now."
    assert phone.calls == [("toggle_roaming", {})]
    assert [c.name for c in turn.calls] == ["toggle_roaming"]
    assert turn.calls[0].observation is not None and turn.calls[0].observation.state == "s1"
    # offered its tool next to end_conversation; the second request holds the call and result
    assert [f["function"]["name"] for f in model.requests[0][1]] == [
        "end_conversation",
        "toggle_roaming",
    ]
    second = model.messages[1]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"]
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "t1",
        "name": "toggle_roaming",
        "content": json.dumps({"error": "", "response": {"roaming": True}}),
    }


async def test_a_tool_the_user_was_not_offered_is_its_failure_and_nothing_runs() -> None:
    phone = Phone()
    model = ScriptedModel(
        [Turn(tool_calls=[ToolCall(id="x", name="enable_roaming", arguments="{}")])]
    )
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert turn.failure == "unknown_tool: enable_roaming"
    assert phone.calls == []
    # without tools of its own, its tool call is no tool either
    model = ScriptedModel([toggle()])
    turn = await ModelUser(model, "persona").reply(OPENING)
    assert turn.failure == "unknown_tool: toggle_roaming"


async def test_arguments_that_are_no_json_object_are_answered_and_not_sent() -> None:
    phone = Phone()
    model = ScriptedModel([toggle(arguments="[1]"), Turn(content="It said no.")])
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert phone.calls == []
    assert turn.content == "It said no."
    obs = turn.calls[0].observation
    assert obs is not None and not obs.ok and obs.provenance == "invalid"
    assert turn.calls[0].args is None


async def test_arguments_nested_too_deep_for_json_are_answered_and_not_sent() -> None:
    # 5,000 levels: json.loads raises RecursionError (not a ValueError); the turn lost its
    # calls and failed as the user's own bug (user_error) instead of answering the call
    phone = Phone()
    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    model = ScriptedModel([toggle(arguments=deep), Turn(content="It said no.")])
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert turn.failure is None and turn.content == "It said no."
    assert phone.calls == []
    obs = turn.calls[0].observation
    assert obs is not None and not obs.ok and obs.provenance == "invalid"
    assert "nested too deeply" in obs.error and len(obs.error) < 300


async def test_a_user_that_never_stops_calling_fails_after_the_limit() -> None:
    phone = Phone()
    model = ScriptedModel(lambda messages: toggle(f"t{len(messages)}"))
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert turn.failure is not None and turn.failure.startswith("too_many_calls")
    assert len(phone.calls) == MAX_TOOL_ROUNDS


async def test_an_infrastructure_failure_of_its_tool_ends_the_turn_without_a_failure() -> None:
    phone = Phone(infra=True)
    model = ScriptedModel([toggle(), Turn(content="never asked")])
    turn = await ModelUser(model, "persona").reply(OPENING, phone)
    assert turn.failure is None and turn.content == ""
    assert len(model.requests) == 1
    assert turn.calls[0].observation is not None and turn.calls[0].observation.infra


def test_the_transcript_shows_the_users_own_calls_before_its_answer() -> None:
    obs = Observation(ok=True, content='{"error": "", "response": {"roaming": true}}')
    call = StepCall(id="t1", name="toggle_roaming", arguments="{}", args={}, observation=obs)
    reply = Node(id=0, parent=None, depth=1, kind="thought", content=OPENING[1]["content"])
    answer = Node(id=1, parent=0, depth=2, kind="user", content="Done.", calls=[call])
    seen = transcript_for([OPENING[0]], [reply, answer])
    assert [m["role"] for m in seen] == ["user", "assistant", "user", "tool", "user"]
    assert seen[2]["tool_calls"][0]["function"]["name"] == "toggle_roaming"
    # and the key depends on the call: the same words after another call are another key
    other = [dict(m) for m in seen]
    other[2] = {**other[2], "tool_calls": [{"function": {"name": "check", "arguments": "{}"}}]}
    assert transcript_key(seen) != transcript_key(other)


def test_a_transcript_without_calls_keys_as_before_dual_control() -> None:
    # the digest main computed before dual control (records made then must still answer)
    transcript: list[Message] = [
        {"role": "user", "content": "Hi, my card K-1 fails."},
        {"role": "assistant", "content": "Which card?"},
        {"role": "user", "content": "K-1."},
    ]
    assert transcript_key(transcript) == (
        "b407bbe10be5f6badd4c2c7936565c9d0f9ba447c84271ee0bbd6ee18538c18c"
    )


def _task() -> Task:
    persona = Persona(scenario="Abroad, data down.", instructions="Do what the agent asks.")
    return Task(id="roam", query=OPENING[0]["content"], user=TaskUser(persona=persona))


async def test_a_recorded_turn_makes_its_calls_again_and_answers_as_recorded(
    tmp_path: Path,
) -> None:
    record = UserRecord(tmp_path / "users.jsonl")
    live = ModelUser(ScriptedModel([toggle(), Turn(content="Roaming is on.")]), "p", name="m")
    first = RecordedUser(live, record, _task(), miss="live")
    phone = Phone()
    said = await first.reply(OPENING, phone)
    assert said.content == "Roaming is on." and phone.roaming
    # a second run: nothing asked, the call made again on its own phone, the same answer
    again = RecordedUser(
        ModelUser(ScriptedModel([]), "p", name="m"),
        UserRecord(tmp_path / "users.jsonl"),
        _task(),
        miss="error",
    )
    other = Phone()
    replayed = await again.reply(OPENING, other)
    assert replayed.failure is None and replayed.source == "record"
    assert replayed.content == "Roaming is on." and other.roaming
    assert replayed.calls[0].observation == said.calls[0].observation


async def test_a_recorded_call_answered_differently_is_a_miss_naming_it(tmp_path: Path) -> None:
    record = UserRecord(tmp_path / "users.jsonl")
    live = ModelUser(ScriptedModel([toggle(), Turn(content="Roaming is on.")]), "p", name="m")
    await RecordedUser(live, record, _task(), miss="live").reply(OPENING, Phone())
    switched_on = Phone()
    switched_on.roaming = True  # the world is elsewhere: the toggle now switches it off
    strict = RecordedUser(live, UserRecord(tmp_path / "users.jsonl"), _task(), miss="error")
    turn = await strict.reply(OPENING, switched_on)
    assert turn.failure is not None and turn.failure.startswith("user_miss")
    assert "toggle_roaming" in turn.failure
    # under --user-miss live the model goes on from the call made, told what it returned
    model = ScriptedModel([Turn(content="Hm, roaming is off now.")])
    lenient = RecordedUser(
        ModelUser(model, "p", name="m"),
        UserRecord(tmp_path / "users.jsonl"),
        _task(),
        miss="live",
    )
    phone = Phone()
    phone.roaming = True
    turn = await lenient.reply(OPENING, phone)
    assert turn.content == "Hm, roaming is off now." and len(phone.calls) == 1
    assert json.loads(model.messages[0][-1]["content"])["response"] == {"roaming": False}


async def test_the_persona_player_makes_the_call_it_is_asked_for_once_and_reports_it() -> None:
    persona = PersonaUserModel(known={}, act=[{"api": "toggle_roaming", "args": {}}])
    user = ModelUser(persona, "p")
    phone = Phone()
    turn = await user.reply(OPENING, phone)
    assert phone.calls == [("toggle_roaming", {})]
    assert turn.content == 'Done. toggle roaming: {"roaming": true}.'
    # asked again after it made the call: it does not make it twice
    answer = Node(id=1, parent=0, depth=2, kind="user", content=turn.content, calls=turn.calls)
    reply = Node(id=0, parent=None, depth=1, kind="thought", content=OPENING[1]["content"])
    again = Node(id=2, parent=1, depth=3, kind="thought", content="Please toggle roaming?")
    seen = transcript_for([OPENING[0]], [reply, answer, again])
    turn = await user.reply(seen, phone)
    assert len(phone.calls) == 1 and turn.calls == []


async def _recorded(tmp_path: Path) -> Path:
    """A record of one turn whose user toggled roaming (the turn's line first)."""
    live = ModelUser(ScriptedModel([toggle(), Turn(content="Roaming is on.")]), "p", name="m")
    await RecordedUser(live, UserRecord(tmp_path / "users.jsonl"), _task()).reply(OPENING, Phone())
    return tmp_path / "users.jsonl"


def _edit(path: Path, edit: Any) -> None:
    entry = json.loads(path.read_text().splitlines()[0])
    edit(entry["turn"])
    path.write_text(json.dumps(entry) + "\n")


async def test_a_recorded_turn_edited_into_no_turn_is_a_miss_naming_its_line(
    tmp_path: Path,
) -> None:
    # calls.0.args a string: the record's pydantic error was the user's failure (user_error,
    # several lines, marked live), as if the user model had failed
    path = await _recorded(tmp_path)
    _edit(path, lambda turn: turn["calls"][0].update(args="on"))
    strict = RecordedUser(
        ModelUser(ScriptedModel([]), "p", name="m"), UserRecord(path), _task(), miss="error"
    )
    turn = await strict.reply(OPENING, Phone())
    assert turn.failure is not None and "\n" not in turn.failure
    assert turn.failure.startswith("user_miss: the record's answer to this transcript is no")
    assert "users.jsonl line 1: calls.0.args: Input should be a valid dictionary" in turn.failure
    assert turn.source == "record"
    # under --user-miss live the model is asked, and its answer recorded is the one read next
    model = ScriptedModel([Turn(content="Roaming? It is off.")])
    lenient = RecordedUser(ModelUser(model, "p", name="m"), UserRecord(path), _task())
    assert (await lenient.reply(OPENING, Phone())).content == "Roaming? It is off."
    again = RecordedUser(
        ModelUser(ScriptedModel([]), "p", name="m"), UserRecord(path), _task(), miss="error"
    )
    assert (await again.reply(OPENING, Phone())).content == "Roaming? It is off."


async def test_a_recorded_call_without_its_answer_is_made_and_is_a_miss(tmp_path: Path) -> None:
    # the call was kept unsent and the recorded answer stood: the world never saw the toggle
    path = await _recorded(tmp_path)
    _edit(path, lambda turn: turn["calls"][0].update(observation=None))
    phone = Phone()
    strict = RecordedUser(
        ModelUser(ScriptedModel([]), "p", name="m"), UserRecord(path), _task(), miss="error"
    )
    turn = await strict.reply(OPENING, phone)
    assert phone.calls == [("toggle_roaming", {})]
    assert turn.failure is not None and turn.failure.startswith("user_miss")
    assert "toggle_roaming has no recorded answer" in turn.failure


async def test_a_record_line_nested_too_deep_for_json_is_skipped_as_a_torn_one(
    tmp_path: Path,
) -> None:
    # json.loads raised RecursionError, which the loader did not catch: the run stopped with a
    # traceback before its first episode
    path = await _recorded(tmp_path)
    deep = '{"key": "k", "turn": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    path.write_text(deep + path.read_text())
    record = UserRecord(path)
    assert len(record) == 1 and record.invalid("k") is None
