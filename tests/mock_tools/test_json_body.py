"""Reading and decoding a JSON request body: every way it can be wrong has its own 4xx."""

import json

import pytest

from mock_tools.json_body import (
    MAX_DEPTH,
    Disconnected,
    check_content_type,
    decode_json,
    read_body,
)
from mock_tools.service import Rejected


def _receiver(*chunks: bytes, disconnect: bool = False):
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    if disconnect:
        messages = messages[:-1] + [{"type": "http.disconnect"}]

    async def receive():
        return messages.pop(0)

    return receive


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    "value",
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/vnd.api+json",
        "text/plain",
        "application/x-www-form-urlencoded",
    ],
)
def test_json_and_undeclared_bodies_are_accepted(value):
    check_content_type(value)


@pytest.mark.parametrize(
    "value", ["application/xml", "multipart/form-data; boundary=x", "text/html"]
)
def test_other_media_types_are_415(value):
    with pytest.raises(Rejected) as e:
        check_content_type(value)
    assert (e.value.status, e.value.code) == (415, "unsupported_media_type")


async def test_body_in_chunks_is_joined():
    assert await read_body(_receiver(b'{"a"', b": 1}"), 100, None) == b'{"a": 1}'


@pytest.mark.parametrize("length", ["11", None])
async def test_body_over_the_limit_is_413_announced_or_streamed(length):
    with pytest.raises(Rejected) as e:
        await read_body(_receiver(b"x" * 6, b"x" * 5), 10, length)
    assert (e.value.status, e.value.code) == (413, "body_too_large")


async def test_announced_length_over_the_limit_is_413_before_reading():
    async def receive():
        raise AssertionError("the body must not be read")

    with pytest.raises(Rejected) as e:
        await read_body(receive, 10, "1000000")
    assert e.value.status == 413


async def test_a_client_leaving_mid_body_is_disconnected():
    with pytest.raises(Disconnected):
        await read_body(_receiver(b"{", b"}", disconnect=True), 100, None)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", {}),
        (b"  \n", {}),
        (b'{"city": "Oslo"}', {"city": "Oslo"}),
        (b"[1, 2]", [1, 2]),
        ('{"c": "Zürich"}'.encode(), {"c": "Zürich"}),
        ('{"a": 1}'.encode("utf-16"), {"a": 1}),  # UTF-16 with a byte-order mark, as before
        (_nested(MAX_DEPTH), None),
    ],
)
def test_decodes_what_the_server_always_accepted(raw, expected):
    value = decode_json(raw)
    if expected is not None:
        assert value == expected


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b'{"a": 1',
        b"\xff\xfe\x00",
        b'{"a": "\xc3"}',
        b'{"a": "\\ud800"}',
        b'{"x": NaN}',  # numbers JSON cannot hold (issue 27 item 14)
        b'{"x": 1e999}',
        '{"x": -Infinity}'.encode("utf-16"),  # through the standard library's path too
    ],
)
def test_malformed_or_invalid_unicode_is_400(raw):
    with pytest.raises(Rejected) as e:
        decode_json(raw)
    assert (e.value.status, e.value.code) == (400, "malformed_json")


def test_a_number_too_long_to_read_is_400_without_pythons_hint():
    with pytest.raises(Rejected) as e:
        decode_json(b'{"n": ' + b"9" * 5_000 + b"}")
    assert (e.value.status, e.value.code) == (400, "malformed_json")
    assert "5000 digits" in e.value.message and "sys.set_int_max_str_digits" not in e.value.message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 5_000, 200_000])
def test_nesting_past_the_limit_is_422(depth):
    with pytest.raises(Rejected) as e:
        decode_json(_nested(depth))
    assert (e.value.status, e.value.code) == (422, "too_deep")


def test_nesting_in_objects_counts_too():
    deep = {"a": 1}
    for _ in range(MAX_DEPTH):
        deep = {"a": deep}
    with pytest.raises(Rejected) as e:
        decode_json(json.dumps(deep))
    assert e.value.status == 422


def test_many_shallow_containers_are_not_deep():
    wide = json.dumps({"rows": [[i] for i in range(500)]})
    assert len(decode_json(wide)["rows"]) == 500
