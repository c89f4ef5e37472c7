from __future__ import annotations

import json

from sandbox.interop.observations import (
    parse_observation,
    render_observation,
    response_from_observation,
    same_observation,
)


def test_render_is_toolbench_json_dumps() -> None:
    text = render_observation("", "{'name': 'Calédonie'}")
    assert text == '{"error": "", "response": "{\'name\': \'Cal\\u00e9donie\'}"}'
    assert text == json.dumps({"error": "", "response": "{'name': 'Calédonie'}"})


def test_error_observation_becomes_failed_response_with_body_kept() -> None:
    text = json.dumps({"error": "Message error...", "response": "{'feed': 1}"})
    decoded = response_from_observation(text)
    assert decoded is not None
    response, cut = decoded
    assert (response.ok, response.error, response.body, cut) == (
        False,
        "Message error...",
        "{'feed': 1}",
        False,
    )
    assert render_observation(response.error, response.body) == text


def test_cut_observation_keeps_its_visible_part() -> None:
    full = render_observation("", "x" * 30 + "é" * 400)
    cut = full[:1024] + "..."
    parsed = parse_observation(cut)
    assert parsed is not None and parsed.truncated
    assert ("x" * 30 + "é" * 400).startswith(parsed.response)
    assert same_observation(cut, full)
    assert same_observation(cut, render_observation("", parsed.response))
    assert not same_observation(cut, render_observation("", "y" + parsed.response))
    assert not same_observation(cut, render_observation("boom", parsed.response))


def test_same_observation_ignores_rendering_but_not_content() -> None:
    a = render_observation("", {"b": 1, "a": "é"})
    b = json.dumps({"error": "", "response": {"a": "é", "b": 1}}, ensure_ascii=False)
    assert same_observation(a, b)
    assert not same_observation(a, render_observation("", {"a": "é", "b": 2}))
    assert not same_observation(a, "not json")


def test_a_cut_json_object_is_a_successful_response_with_its_visible_text() -> None:
    full = render_observation("", {"items": [{"id": i, "name": "caf\u00e9"} for i in range(80)]})
    cut = full[:1024] + "..."
    decoded = response_from_observation(cut)
    assert decoded is not None
    response, was_cut = decoded
    assert was_cut and response.ok and response.error == ""
    assert isinstance(response.body, str) and full.startswith(
        '{"error": "", "response": ' + response.body
    )
    # served back as a string and rendered again, it still matches the original cut
    replayed = render_observation("", response.body)
    assert same_observation(cut, replayed)
    assert same_observation(cut, replayed[:1024] + "...")
    assert not same_observation(cut, render_observation("", "{" + response.body))
    # without ToolBench's cut mark, broken JSON is not taken for a cut
    assert parse_observation(full[:1024]) is None
