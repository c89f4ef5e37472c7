"""The diversity prompt lists the earlier candidates; in ToolBench's form each carries ToolBench's
constant action value and the list is ASCII-escaped JSON indented by 2, as its DFS writes it."""

from __future__ import annotations

import json

from agents.prompts import DIVERSITY_HEADER, diversity_prompt

EARLIER = [{"name": "f_for_t", "arguments": '{"city": "Zürich"}', "function_output": "{}"}]


def test_project_form_lists_the_candidates_as_given() -> None:
    text = diversity_prompt(EARLIER, "last")
    assert text.startswith(DIVERSITY_HEADER)
    assert json.dumps(EARLIER, indent=2, ensure_ascii=False) in text and "last" in text


def test_toolbench_form_adds_the_action_value_and_escapes() -> None:
    text = diversity_prompt(EARLIER, None, toolbench=True)
    expected = [{**EARLIER[0], "mento-carlo-action-value": 0.0}]
    assert json.dumps(expected, indent=2) in text  # json.dumps' default: ASCII-escaped
    assert "Zürich" not in text and "Z\\u00fcrich" in text
    assert EARLIER[0].keys() == {"name", "arguments", "function_output"}  # input untouched
