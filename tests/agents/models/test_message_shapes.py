"""The history in ToolBench's shape: tool results keep their function name, an assistant turn
that only called functions has ``content: null``; the strict OpenAI shape stays as it was."""

from __future__ import annotations

from agents.models.message_shapes import to_toolbench_messages
from agents.models.openai_compat import to_openai_messages

CALL = {"id": "c1", "type": "function", "function": {"name": "f_for_t", "arguments": "{}"}}
HISTORY = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "name": "f_for_t", "content": '{"error": ""}'},
    {"role": "assistant", "content": "thinking"},
]


def test_toolbench_shape() -> None:
    assert to_toolbench_messages(HISTORY) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "name": "f_for_t", "content": '{"error": ""}', "tool_call_id": "c1"},
        {"role": "assistant", "content": "thinking"},
    ]
    tool = to_toolbench_messages(HISTORY)[3]
    assert list(tool) == ["role", "name", "content", "tool_call_id"]  # ToolBench's key order


def test_openai_shape_is_unchanged() -> None:
    out = to_openai_messages(HISTORY)
    assert out[2] == {"role": "assistant", "content": "", "tool_calls": [CALL]}
    assert out[3] == {"role": "tool", "content": '{"error": ""}', "tool_call_id": "c1"}
