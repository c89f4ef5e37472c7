"""HTML entities in a model's replies: unescaped for a server that escapes its prompts (the
``smollm2-135m`` alias, llama-cpp-python's chatml-function-calling), kept as written elsewhere.

The real replies come from the corpus (``tests/fixtures/real_replies``): the model copies the
escaping of its prompt into what it writes, and without unescaping its own words come back to it
escaped once more at every turn (``'`` -> ``&#39;`` -> ``&amp;#39;``)."""

from __future__ import annotations

import json
from pathlib import Path

from agents.model import ToolCall, Turn
from agents.step import interpret_turn
from mock_tools.models import Task
from sandbox.models import ModelSettings, build_models, resolve_model
from sandbox.models.entities import unescape_arguments, unescape_turn
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "real_replies" / "replies.jsonl"
TASK = Task(id="t", query="q", tools=[])
FUNCTION = {"type": "function", "function": {"name": "get_city", "parameters": {"type": "object"}}}


def jinja_escape(text: str) -> str:
    """What the server's template does to every message (markupsafe's escape)."""
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("'", "&#39;")):
        text = text.replace(raw, entity)
    return text.replace('"', "&#34;")


def test_arguments_are_unescaped_inside_their_strings_and_stay_json() -> None:
    raw = '{"city": "Ceuta &#34;Izabla&#34;", "note": "Berlin&#39;s"}'
    assert json.loads(unescape_arguments(raw)) == {"city": 'Ceuta "Izabla"', "note": "Berlin's"}
    assert unescape_arguments('{"city": "Berlin"}') == '{"city": "Berlin"}'  # verbatim
    assert unescape_arguments('{"city": "Ber&#39;') == '{"city": "Ber&#39;'  # not JSON: as is


def test_the_model_sees_its_own_words_as_it_wrote_them_the_next_turn() -> None:
    """Unescaped, a reply written in the prompt's escaped form is rendered back exactly; kept
    as written, it is escaped once more at every turn."""
    wrote = "Let&#39;s look up &#34;Berlin&#34; &amp; Potsdam."
    turn = unescape_turn(Turn(content=wrote))
    assert jinja_escape(turn.content or "") == wrote
    assert (
        jinja_escape(wrote) == "Let&amp;#39;s look up &amp;#34;Berlin&amp;#34; &amp;amp; Potsdam."
    )


def test_real_replies_with_entities_read_as_plain_text_and_keep_their_kind() -> None:
    entries = [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines()]
    native = [e for e in entries if e["adapter"] == "native"]
    escaped = [e for e in native if "&#" in json.dumps(e["body"]["choices"][0]["message"])]
    assert escaped, "the corpus holds native replies with entities"
    for entry in escaped:
        message = entry["body"]["choices"][0]["message"]
        raw = Turn(
            content=message.get("content"),
            tool_calls=[
                ToolCall(
                    id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"]
                )
                for c in message.get("tool_calls") or []
            ],
        )
        plain = unescape_turn(raw)
        assert "&#" not in (plain.content or "")
        before = interpret_turn(raw, entry["functions"])
        after = interpret_turn(plain, entry["functions"])
        assert after.kind == before.kind
        for old, new in zip(before.calls, after.calls, strict=True):
            if old.args is not None:  # what parsed still parses, now without entities
                assert new.args is not None and "&#" not in json.dumps(new.args)


async def test_the_native_alias_unescapes_and_the_text_alias_keeps_the_text() -> None:
    args = json.dumps({"city": "Ceuta &#34;Izabla&#34;"})
    replies = {
        "smollm2-135m": (tool_call_reply("get_city", args), 'Ceuta "Izabla"'),
        "smollm2-135m-text": (
            text_reply(f"Thought: go\nAction: get_city\nAction Input: {args}"),
            "Ceuta &#34;Izabla&#34;",
        ),
    }
    with ScriptedOpenAIServer(models=["SmolLM2-135M-Instruct"]) as server:
        for alias, (reply, city) in replies.items():
            spec = resolve_model(alias, env={}).model_copy(update={"base_url": server.base_url})
            models = build_models(spec, ModelSettings())
            server.default = reply
            try:
                turn = await models.for_episode(TASK, seed=0, trial=0).complete(
                    [{"role": "user", "content": "q"}], [FUNCTION]
                )
            finally:
                await models.aclose()
            assert json.loads(turn.tool_calls[0].arguments)["city"] == city, alias
