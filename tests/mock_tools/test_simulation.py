"""The simulate path: what a simulator is told, what counts as its answer, the overlay, and
identical misses served by one simulation."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mock_tools import PROVENANCE_HEADER, create_app, in_process_client, load_suite
from mock_tools.errors import MockToolsError
from mock_tools.models import ApiSpec, Response, ToolSpec
from mock_tools.overlay import OverlayStore, freeze
from mock_tools.simulation import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLES,
    Completion,
    PromptedSimulator,
    SchemaSimulator,
    SimulationFailed,
    SimulationRequest,
    named_simulator,
    parse_simulated,
    simulation_messages,
    simulation_request,
)
from mock_tools.store import RecordingStore

WEATHER = ToolSpec(
    name="Weather Now",
    description="Current weather by city.",
    apis=[
        ApiSpec(
            name="current",
            description="Current conditions.",
            parameters={
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "A city name."},
                    "days": {"type": "integer", "default": 1},
                },
                "required": ["city"],
            },
            returns='{"temp_c": "int", "sky": "str", "city": "str"}',
        )
    ],
)


def _store(n: int, body_chars: int = 10) -> RecordingStore:
    store = RecordingStore(schemas={("Weather Now", "current"): WEATHER.apis[0].parameters})
    for i in range(n):
        store.add_keyed(
            "Weather Now", "current", json.dumps({"city": f"C{i}"}), Response(body="x" * body_chars)
        )
    return store


def test_a_request_documents_the_api_and_carries_recorded_examples() -> None:
    request = simulation_request(WEATHER, "current", {"city": "Rome"}, _store(8))
    doc = request.documentation()
    assert doc["api_description"] == "Current conditions."
    assert doc["required_parameters"] == [
        {"name": "city", "type": "string", "description": "A city name."}
    ]
    assert doc["optional_parameters"] == [{"name": "days", "type": "integer", "default": 1}]
    assert doc["response_template"].startswith('{"temp_c"')
    assert len(request.examples) == MAX_EXAMPLES  # at most five, in recording order
    assert [a["city"] for a, _ in request.examples] == ["C0", "C1", "C2", "C3", "C4"]


def test_examples_shrink_while_their_text_is_too_long() -> None:
    request = simulation_request(WEATHER, "current", {"city": "Rome"}, _store(5, body_chars=900))
    assert len(request.examples) == 2  # three would exceed 2,048 characters
    one = simulation_request(WEATHER, "current", {}, _store(1, body_chars=5000))
    assert len(one.examples) == 1  # never fewer than one...
    shown = simulation_messages(one)[1]["content"]
    assert len(shown) < 5000 + 1000  # ...but its text is cut in the prompt
    assert MAX_EXAMPLE_CHARS == 2048


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"error": "", "response": {"temp_c": 20}}', Response(ok=True, body={"temp_c": 20})),
        ('```json\n{"error": "", "response": [1]}\n```', Response(ok=True, body=[1])),
        (
            '{"error": "city not found", "response": ""}',
            Response(ok=False, error="city not found", body=""),
        ),
        ('{"temp_c": 20}', Response(ok=True, body={"temp_c": 20})),
        ("[1, 2]", None),
        ("It is 20 degrees.", None),
        ('"just a string"', None),
        ("", None),
    ],
)
def test_only_a_json_object_is_a_simulated_answer(reply: str, expected: Response | None) -> None:
    assert parse_simulated(reply) == expected


async def test_a_prompted_simulator_retries_replies_that_are_not_objects_then_fails() -> None:
    replies = iter(["not json", "[1]", '{"error": "", "response": {"ok": 1}}'])
    asked: list[Any] = []

    async def complete(messages: list[dict[str, Any]]) -> Completion:
        asked.append(messages)
        return Completion(next(replies), prompt_tokens=100, completion_tokens=10, cost=0.001)

    sim = PromptedSimulator(complete, name="fake", attempts=3)
    response = await sim.simulate(SimulationRequest(tool="t", api="a", args={}))
    assert response.body == {"ok": 1} and len(asked) == 3
    assert (sim.usage.calls, sim.usage.invalid_replies, sim.usage.failures) == (3, 2, 0)
    assert sim.usage.cost == pytest.approx(0.003)
    bad = PromptedSimulator(complete, name="fake", attempts=1)
    replies = iter(["nope"])
    with pytest.raises(SimulationFailed, match="did not answer with a JSON object"):
        await bad.simulate(SimulationRequest(tool="t", api="a", args={}))
    assert bad.usage.failures == 1


async def test_schema_sim_fills_the_template_deterministically() -> None:
    request = simulation_request(WEATHER, "current", {"city": "Rome"}, _store(0))
    first = await SchemaSimulator().simulate(request)
    again = await named_simulator("schema-sim").simulate(request)
    assert first == again and first.ok
    assert first.body["city"] == "Rome"  # an argument of the same name is kept
    assert isinstance(first.body["temp_c"], int) and isinstance(first.body["sky"], str)
    other = await SchemaSimulator().simulate(
        simulation_request(WEATHER, "current", {"city": "Oslo"}, _store(0))
    )
    assert other.body != first.body


def test_an_unknown_simulator_name_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="unknown simulator|unknown model"):
        named_simulator("no-such-simulator-model")


class CountingSimulator:
    name = "counting"

    def __init__(self, delay: float = 0.05) -> None:
        self.calls: list[SimulationRequest] = []
        self.delay = delay

    async def simulate(self, request: SimulationRequest) -> Response:
        self.calls.append(request)
        await asyncio.sleep(self.delay)
        return Response(body={"simulated_for": request.args, "n": len(self.calls)})


async def test_identical_misses_in_flight_make_one_simulation(suite_dir: Path, tmp_path: Path):
    sim = CountingSimulator()
    overlay = tmp_path / "overlay.sqlite"
    app = create_app(load_suite(suite_dir), miss_policy="simulate", simulator=sim, overlay=overlay)
    async with in_process_client(app) as c:
        answers = await asyncio.gather(
            *(
                c.post(
                    "/tools/Weather Now/current",
                    json={"city": "Rome"},
                    headers={"X-Sandbox-Session": f"episode-{i}"},
                )
                for i in range(6)
            )
        )
    assert len(sim.calls) == 1
    bodies = {json.dumps(a.json()["body"], sort_keys=True) for a in answers}
    assert len(bodies) == 1 and all(a.headers[PROVENANCE_HEADER] == "simulated" for a in answers)
    # the simulator saw the API's documentation and its recorded calls as examples
    (request,) = sim.calls
    assert request.spec is not None and request.examples


async def test_the_overlay_keeps_answers_and_leaves_the_suite_untouched(suite_dir, tmp_path):
    suite = load_suite(suite_dir)
    before = suite.fingerprint
    overlay_path = tmp_path / "overlay.sqlite"
    first = CountingSimulator(delay=0)
    app = create_app(suite, miss_policy="simulate", simulator=first, overlay=overlay_path)
    async with in_process_client(app) as c:
        made = (await c.post("/tools/Weather Now/current", json={"city": "Rome"})).json()
    assert made["provenance"] == "simulated" and made["origin"]["model"] == "counting"
    # a new server on the same overlay serves the stored answer, still as simulated
    second = CountingSimulator(delay=0)
    app = create_app(suite, miss_policy="simulate", simulator=second, overlay=overlay_path)
    async with in_process_client(app) as c:
        served = (await c.post("/tools/Weather Now/current", json={"city": "Rome"})).json()
    assert second.calls == [] and served["body"] == made["body"]
    assert served["provenance"] == "simulated" and served["origin"]["source"] == "simulated"
    assert load_suite(suite_dir).fingerprint == before
    # freezing writes the overlay into the suite's recordings: then it is a plain hit
    store = OverlayStore(overlay_path)
    summary = freeze(suite_dir, store, name="frozen.jsonl")
    store.close()
    assert summary["written"] == 1 and Path(summary["file"]).name == "frozen.jsonl"
    frozen = load_suite(suite_dir)
    assert frozen.fingerprint != before
    async with in_process_client(create_app(frozen)) as c:
        hit = await c.post("/tools/Weather Now/current", json={"city": "Rome"})
    assert hit.headers[PROVENANCE_HEADER] == "hit" and hit.json()["body"] == made["body"]


async def test_a_failed_simulation_is_infrastructure_and_is_not_kept(suite_dir, tmp_path):
    class Down:
        name = "down"

        async def simulate(self, request: SimulationRequest) -> Response:
            raise SimulationFailed("the simulator model failed: connection refused")

    overlay_path = tmp_path / "overlay.sqlite"
    app = create_app(
        load_suite(suite_dir), miss_policy="simulate", simulator=Down(), overlay=overlay_path
    )
    async with in_process_client(app) as c:
        r = await c.post("/tools/Weather Now/current", json={"city": "Rome"})
    assert r.status_code == 502 and r.json()["infra"] is True
    assert r.json()["code"] == "sim_failed" and "connection refused" in r.json()["error"]
    assert len(OverlayStore(overlay_path)) == 0


def test_the_overlay_takes_writes_from_many_threads_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from mock_tools.models import Provenance

    store = OverlayStore(tmp_path / "overlay.sqlite")

    def write(thread: int) -> None:
        for i in range(100):
            key = json.dumps({"i": i, "thread": thread})
            store.put("t", "a", key, Response(body=i), Provenance(source="simulated"))
            assert store.get("t", "a", key) is not None

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(8)))
    assert len(store) == 800
    store.close()


class NamedSimulator:
    """Answers every miss with its own name; with ``overlay``, only once that overlay holds an
    answer for the call (so it answers second, whatever the scheduling)."""

    def __init__(self, name: str, overlay: Path | None = None) -> None:
        self.name = name
        self.overlay = overlay

    async def simulate(self, request: SimulationRequest) -> Response:
        if self.overlay is not None:
            watcher = OverlayStore(self.overlay)
            while not len(watcher):
                await asyncio.sleep(0.01)
            watcher.close()
        return Response(body={"by": self.name})


async def test_two_servers_simulating_one_miss_at_once_both_serve_the_first_stored_answer(
    suite_dir: Path, tmp_path: Path
) -> None:
    """Determinism of simulated misses: two servers (two processes, one overlay) simulate the
    same miss at the same time; the answer stored first is the one both serve, and the one
    every later server serves. The second answer never replaces it."""
    suite, overlay = load_suite(suite_dir), tmp_path / "overlay.sqlite"

    def server(simulator: NamedSimulator) -> Any:
        return create_app(suite, miss_policy="simulate", simulator=simulator, overlay=overlay)

    first, second = server(NamedSimulator("first")), server(NamedSimulator("second", overlay))
    args = {"city": "Rome"}
    async with in_process_client(first) as a, in_process_client(second) as b:
        answers = await asyncio.gather(
            b.post("/tools/Weather Now/current", json=args),
            a.post("/tools/Weather Now/current", json=args),
        )
    assert [r.json()["body"] for r in answers] == [{"by": "first"}, {"by": "first"}]
    async with in_process_client(server(NamedSimulator("later"))) as c:
        again = await c.post("/tools/Weather Now/current", json=args)
    assert again.json()["body"] == {"by": "first"}
    (kept,) = list(OverlayStore(overlay).recordings())
    assert kept.response.body == {"by": "first"}


def test_the_overlay_keeps_the_first_answer_stored_for_a_call(tmp_path: Path) -> None:
    """``put`` stores an answer unless the call has one, and returns the one stored: from the
    same store and from a second store opened on the same file (another process)."""
    from mock_tools.models import Provenance

    one, two = OverlayStore(tmp_path / "o.sqlite"), OverlayStore(tmp_path / "o.sqlite")
    made = Provenance(source="simulated")
    first = one.put("t", "a", '{"q": 1}', Response(body="first"), made)
    assert first[0].body == "first"
    assert one.put("t", "a", '{"q": 1}', Response(body="second"), made)[0].body == "first"
    assert two.put("t", "a", '{"q": 1}', Response(body="third"), made)[0].body == "first"
    stored = two.get("t", "a", '{"q": 1}')
    assert stored is not None and stored[0].body == "first" and len(two) == 1
    # another call (other arguments, api or tool) is a key of its own
    assert two.put("t", "a", '{"q": 2}', Response(body="other"), made)[0].body == "other"
    assert two.put("t", "b", '{"q": 1}', Response(body="api b"), made)[0].body == "api b"
    assert two.put("u", "a", '{"q": 1}', Response(body="tool u"), made)[0].body == "tool u"
    assert len(one) == 4
    one.close()
    two.close()


def test_an_answer_stored_without_a_time_is_stamped_with_when_it_was_stored(tmp_path: Path) -> None:
    """The overlay records when a simulated or fetched answer was made (UTC, at storing) unless
    its provenance says already; the stamp is what later servers and ``freeze`` read back."""
    from datetime import datetime, timezone

    from mock_tools.models import Provenance

    store = OverlayStore(tmp_path / "o.sqlite")
    before = datetime.now(timezone.utc)
    _, made = store.put("t", "a", "{}", Response(body=1), Provenance(source="simulated"))
    after = datetime.now(timezone.utc)
    assert made.recorded_at is not None and before <= made.recorded_at <= after
    assert made.recorded_at.utcoffset() is not None  # an aware time, in UTC
    given = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    _, kept = store.put("t", "b", "{}", Response(body=2), Provenance(recorded_at=given))
    assert kept.recorded_at == given
    (first, second) = list(store.recordings())
    assert (first.provenance.recorded_at, second.provenance.recorded_at) == (
        made.recorded_at,
        given,
    )
    store.close()


def test_freeze_writes_only_the_unrecorded_answers_and_says_what_it_did(
    suite_dir: Path, tmp_path: Path
) -> None:
    """``sandbox suite freeze``: the overlay's answers the suite does not record yet go into one
    new recordings file, by default named for the UTC time it was written; the summary names
    the suite, the overlay, how many entries it held, how many were written and how many the
    suite recorded already. Nothing new: no file. A name taken already is refused."""
    from datetime import datetime, timezone

    from mock_tools.models import Provenance

    suite = load_suite(suite_dir)
    store = RecordingStore.from_suite(suite)
    overlay = OverlayStore(tmp_path / "overlay.sqlite")
    made = Provenance(source="simulated")
    for city in ("Oslo", "Rome", "Lima"):  # Oslo is recorded by the suite
        key = store.key("Weather Now", "current", {"city": city})
        overlay.put("Weather Now", "current", key, Response(body={"city": city}), made)
    before = datetime.now(timezone.utc).replace(microsecond=0)
    summary = freeze(suite_dir, overlay)
    after = datetime.now(timezone.utc)
    target = Path(str(summary["file"]))
    assert summary == {
        "suite": str(suite_dir),
        "overlay": str(tmp_path / "overlay.sqlite"),
        "overlay_entries": 3,
        "written": 2,
        "already_recorded": 1,
        "file": str(suite_dir / "recordings" / target.name),
    }
    stamp = re.fullmatch(r"frozen-(\d{8}T\d{6}Z)\.jsonl", target.name)
    assert stamp is not None
    written_at = datetime.strptime(stamp.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    assert before <= written_at <= after
    assert len(target.read_text(encoding="utf-8").splitlines()) == 2
    again = freeze(suite_dir, overlay)  # both are recorded now
    assert (again["written"], again["already_recorded"], again["file"]) == (0, 3, None)
    overlay.put(
        "Weather Now",
        "current",
        store.key("Weather Now", "current", {"city": "Bern"}),
        Response(body=1),
        made,
    )
    with pytest.raises(
        MockToolsError, match=re.escape(f"{target} exists already; choose another name")
    ):
        freeze(suite_dir, overlay, name=target.name)
    overlay.close()


def test_the_overlay_fingerprint_is_a_digest_of_its_entries_in_key_order(tmp_path: Path) -> None:
    """What a run records of the overlay it started with: sha256 over each entry's tool, API,
    key and response (NUL-separated, one line each) in key order, so the same entries give the
    same fingerprint whatever order they were stored in."""
    import hashlib

    from mock_tools.models import Provenance

    one, two = OverlayStore(tmp_path / "1.sqlite"), OverlayStore(tmp_path / "2.sqlite")
    assert one.fingerprint() == "sha256:" + hashlib.sha256(b"").hexdigest()
    entries = [("t", "b", '{"q": 2}', Response(body="é")), ("t", "a", '{"q": 1}', Response(body=1))]
    for store, order in ((one, entries), (two, entries[::-1])):
        for tool, api, key, response in order:
            store.put(tool, api, key, response, Provenance(source="simulated"))
    expected = hashlib.sha256()
    for tool, api, key, response in sorted(entries, key=lambda e: e[:3]):
        expected.update(f"{tool}\0{api}\0{key}\0{response.model_dump_json()}\n".encode())
    assert one.fingerprint() == two.fingerprint() == "sha256:" + expected.hexdigest()
    one.close()
    two.close()


def test_an_overlay_in_a_folder_not_made_yet_is_created_with_its_folders(tmp_path: Path) -> None:
    store = OverlayStore(tmp_path / "a" / "b" / "overlay.sqlite")
    assert len(store) == 0 and (tmp_path / "a" / "b" / "overlay.sqlite").is_file()
    store.close()


@pytest.mark.parametrize("name", ["../up.jsonl", "sub/x.jsonl", "x.json", ".hidden.jsonl", ""])
def test_freeze_refuses_a_name_that_is_no_plain_recordings_file_name_and_says_what_is(
    name: str,
) -> None:
    """The one-line error tells the user what a valid name looks like and where it goes."""
    from mock_tools.overlay import check_recordings_name

    with pytest.raises(MockToolsError) as e:
        check_recordings_name(name)
    assert str(e.value) == (
        f"{name!r} is not a recordings file name: give a plain name ending in .jsonl "
        "(letters, digits and . _ @ + = -, starting with a letter or digit, at most 128 "
        "characters); the file goes into the suite's recordings/ folder"
    )
    check_recordings_name("frozen-2024_05.jsonl")  # a plain name passes


def test_an_overlay_that_cannot_be_opened_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "overlay.sqlite"
    folder.mkdir()  # a folder where the file should be
    with pytest.raises(
        MockToolsError, match=f"^{re.escape(str(folder))}: cannot open the overlay: "
    ):
        OverlayStore(folder)
