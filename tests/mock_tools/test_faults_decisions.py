"""Which calls meet an injected fault, and what the agent then reads.

The decision is documented (``mock_tools/faults.py``) as a pure function of ``(seed, scenario,
tool, api, canonical key, occurrence)`` through SHA-256: the compact JSON array of those six
values, UTF-8 encoded (non-ASCII kept as is), hashed; the first 8 bytes, big-endian, over 2**64 are
the draw, a fault happens when the draw is below the rate, and the next 8 bytes modulo the number
of kinds pick the kind. The expected decisions below are computed from that description with the
material written out by hand, so a change of the material (its spelling of a missing scenario,
its escaping of non-ASCII text) or of the boundary shows, as it would show to anyone reproducing a
faulted run from its settings.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from mock_tools import FaultConfig, decide_fault
from mock_tools.errors import MockToolsError
from mock_tools.faults import FaultReply, fault_reply, parse_fault_header
from mock_tools.models import FAULT_KINDS, FaultKind


def _digest(material: str) -> bytes:
    return hashlib.sha256(material.encode("utf-8")).digest()


def _draw(material: str) -> float:
    return int.from_bytes(_digest(material)[:8], "big") / float(2**64)


def _expected(material: str, rate: float, kinds: list[FaultKind]) -> FaultKind | None:
    if _draw(material) >= rate:
        return None
    return kinds[int.from_bytes(_digest(material)[8:16], "big") % len(kinds)]


KINDS: list[FaultKind] = list(FAULT_KINDS)


def test_a_call_without_a_scenario_draws_with_an_empty_scenario() -> None:
    """``scenario=None`` is hashed as the empty string: a run without scenarios meets the faults
    anyone can recompute from ``[seed,"",tool,api,key,occurrence]``."""
    cfg = FaultConfig(rate=0.5, seed=11)
    got = [decide_fault(cfg, None, "weather", "current", "{}", n) for n in range(1, 41)]
    want = [_expected(f'[11,"","weather","current","{{}}",{n}]', 0.5, KINDS) for n in range(1, 41)]
    assert got == want
    assert {k is None for k in want} == {True, False}  # the sample has both outcomes


def test_non_ascii_calls_are_hashed_as_utf_8_text_not_json_escapes() -> None:
    """A city named in its own alphabet is hashed as its UTF-8 bytes, as the canonical key that
    carries it is (``ensure_ascii=False``), not as ``\\u`` escapes."""
    cfg = FaultConfig(rate=0.5, seed=3)
    key = '{"city":"Zürich"}'
    got = [decide_fault(cfg, "tâche", "météo", "current", key, n) for n in range(1, 41)]
    material = '[3,"tâche","météo","current","{{\\"city\\":\\"Zürich\\"}}",{n}]'
    want = [_expected(material.format(n=n), 0.5, KINDS) for n in range(1, 41)]
    assert got == want
    assert {k is None for k in want} == {True, False}


def test_a_draw_equal_to_the_rate_is_not_a_fault() -> None:
    """The rate is the share of draws in ``[0, rate)``: a call whose draw is exactly the rate
    passes, and the same call under any higher rate meets a fault."""
    material = '[5,"s","t","a","{}",1]'
    draw = _draw(material)
    assert decide_fault(FaultConfig(rate=draw, seed=5), "s", "t", "a", "{}", 1) is None
    above = FaultConfig(rate=min(1.0, draw + 1e-9), seed=5)
    assert decide_fault(above, "s", "t", "a", "{}", 1) == _expected(material, 1.0, KINDS)


def test_an_empty_list_of_kinds_never_faults_even_at_rate_one() -> None:
    """``kinds: []`` switches injection off (there is nothing to inject), it never crashes."""
    cfg = FaultConfig(rate=1.0, kinds=[])
    assert [decide_fault(cfg, "s", "t", "a", f'{{"i":{i}}}', 1) for i in range(50)] == [None] * 50


@pytest.mark.parametrize(
    ("kind", "reply"),
    [
        ("http_500", FaultReply(500, "injected fault: internal server error")),
        (
            "rate_limit_429",
            FaultReply(
                429, "injected fault: rate limit exceeded, retry later", {"Retry-After": "1"}
            ),
        ),
        ("timeout", FaultReply(504, "injected fault: the tool timed out")),
        ("empty_body", FaultReply(200, "injected fault: empty body", body=b"")),
    ],
)
def test_each_fault_answers_with_its_status_and_the_message_agents_read(
    kind: FaultKind, reply: FaultReply
) -> None:
    """The error text is what an agent (and the offline reference model, which retries on an
    ``injected fault:`` error) reads: status, message, headers and body are exact."""
    assert fault_reply(kind) == reply


def test_a_malformed_body_is_a_success_envelope_cut_short() -> None:
    """``malformed_body`` answers 200 with the start of an ok envelope that is not JSON: the
    client sees what looks like success and must notice the body cannot be read."""
    reply = fault_reply("malformed_body")
    assert (reply.status, reply.message, dict(reply.headers)) == (
        200,
        "injected fault: malformed body",
        {},
    )
    assert reply.body is not None and reply.body.startswith(b'{"ok": true, "body": {')
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.body)


def test_a_bad_fault_header_names_every_problem_with_its_field() -> None:
    """Each problem is ``field.path: message``, joined by ``; ``; a problem of the whole value
    (not an object, not JSON) is named ``value``."""
    with pytest.raises(MockToolsError) as caught:
        parse_fault_header('{"rate": 2, "kinds": ["nope"]}')
    assert re.fullmatch(
        r"invalid X-Sandbox-Faults header: rate: [^;]+; kinds\.0: [^;]+", str(caught.value)
    )
    for whole in ("[1]", "not json"):
        with pytest.raises(MockToolsError) as caught:
            parse_fault_header(whole)
        assert re.fullmatch(r"invalid X-Sandbox-Faults header: value: [^;]+", str(caught.value))
