"""The viewer's HTTP routes: every page and every JSON route over runs made in the test, unknown
ids and path traversal (a 404 with a message, never a 500 and never a file outside the runs),
runs that cannot be read, a run still going, and a replay that diverged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import TASKS, TREE_TASK, ViewRuns, copy_run, running_copy
from fastapi.testclient import TestClient

from sandbox.replay import replay_run
from sandbox.view.app import create_app


@pytest.fixture(scope="module")
def client(view_runs: ViewRuns) -> TestClient:
    return TestClient(create_app(view_runs.root), raise_server_exceptions=False)


def test_the_index_lists_every_run_from_manifest_and_scores(
    client: TestClient, view_runs: ViewRuns
) -> None:
    runs = client.get("/api/runs").json()
    by_key = {r["key"]: r for r in runs}
    assert set(by_key) == {view_runs.dfsdt, view_runs.react, view_runs.reference}
    d = by_key[view_runs.dfsdt]
    scores = view_runs.scores(view_runs.dfsdt)
    assert d["agent"] == "dfsdt" and d["model"] == "noisy-reference:0.5"
    assert d["suite"] == "default" and d["status"] == "completed" and d["scored"]
    assert d["episodes"] == d["finished"] == len(TASKS)
    assert d["pass_rate"]["value"] == scores["pass_rate"]["pass_rate"]["value"]
    assert d["pass_rate"]["low"] <= d["pass_rate"]["value"] <= d["pass_rate"]["high"]
    assert d["tokens"] == scores["usage"]["prompt_tokens"] + scores["usage"]["completion_tokens"]
    assert by_key[view_runs.reference]["pass_rate"]["value"] == 1.0


def test_a_run_page_has_scores_config_plots_and_episode_rows(
    client: TestClient, view_runs: ViewRuns
) -> None:
    page = client.get(f"/api/runs/{view_runs.dfsdt}").json()
    assert page["config"]["agent"]["name"] == "dfsdt" and page["label_source"] == "scores"
    assert "labels" not in page["scores"] and page["scores"]["pass_rate"]["n"] == len(TASKS)
    assert page["plots"] == ["pass_rate.png", "step_profile.png", "cost_vs_pass.png"]
    png = client.get(f"/api/runs/{view_runs.dfsdt}/plots/pass_rate.png")
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"

    rows = client.get(f"/api/runs/{view_runs.dfsdt}/episodes").json()
    assert [r["task_id"] for r in rows] == TASKS
    trajs = {t["scenario_id"]: t for t in view_runs.trajectories(view_runs.dfsdt)}
    labels = {lb["task_id"]: lb for lb in view_runs.scores(view_runs.dfsdt)["labels"]}
    for r in rows:
        assert r["steps"] == len(trajs[r["task_id"]]["nodes"])
        assert r["label"] == labels[r["task_id"]]["label"]
        assert r["reason"] == labels[r["task_id"]]["reason"]
        assert ("solved" in r["tags"]) == (r["label"] == "solved")
        assert ("gave_up" in r["tags"]) == (r["status"] == "gave_up")


def test_a_dfsdt_episode_has_its_tree_marked(client: TestClient, view_runs: ViewRuns) -> None:
    ep = client.get(f"/api/runs/{view_runs.dfsdt}/episodes/{TREE_TASK}/0").json()
    traj = ep["trajectory"]
    assert len(traj["nodes"]) == len(ep["marks"]) > 5
    marks = {m["id"]: m for m in ep["marks"]}
    assert [m["id"] for m in ep["marks"] if m["on_path"]] == traj["chosen_path"]
    assert any(m["give_up"] for m in ep["marks"]) and any(m["pruned"] for m in ep["marks"])
    for node in traj["nodes"]:
        assert marks[node["id"]]["give_up"] == (node["kind"] == "give_up")
    assert ep["task"]["id"] == TREE_TASK and ep["label"]["task_id"] == TREE_TASK
    assert ep["previous"] is None and ep["next"] == [TASKS[1], 0]


def test_compare_shows_each_episode_with_outcome_and_first_difference(
    client: TestClient, view_runs: ViewRuns
) -> None:
    cmp = client.get(f"/api/compare?runs={view_runs.react},{view_runs.dfsdt}").json()
    assert [r["key"] for r in cmp["runs"]] == [view_runs.react, view_runs.dfsdt]
    assert cmp["same_suite"] and [r["task_id"] for r in cmp["rows"]] == TASKS
    tally = cmp["tallies"][1]
    outcomes = [row["cells"][1]["outcome"] for row in cmp["rows"]]
    assert (tally["wins"], tally["losses"], tally["ties"]) == (
        outcomes.count("win"),
        outcomes.count("loss"),
        outcomes.count("tie"),
    )
    tree_row = next(r for r in cmp["rows"] if r["task_id"] == TREE_TASK)
    assert tree_row["cells"][1]["first_diff"] is not None  # ReAct gave up, DFSDT searched on
    same = client.get(f"/api/compare?runs={view_runs.react},{view_runs.react}")
    assert same.status_code == 400  # the same run twice is one run


def test_leaderboard_route_ranks_the_runs(client: TestClient, view_runs: ViewRuns) -> None:
    board = client.get("/api/leaderboard").json()
    assert [r["rank"] for r in board["rows"]] == [1, 2, 3]
    rates = [r["pass_rate"] for r in board["rows"]]
    assert rates == sorted(rates, reverse=True) and board["rows"][-1]["keys"] == [view_runs.react]
    ref = client.get(f"/api/leaderboard?reference={view_runs.reference}").json()
    assert {r["keys"][0]: r["is_reference"] for r in ref["rows"]}[view_runs.reference]


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/runs/{dfsdt}",
        f"/runs/{{dfsdt}}/episodes/{TREE_TASK}/0",
        "/compare?runs={react},{dfsdt}",
        "/compare",
        "/leaderboard",
        "/leaderboard?reference={reference}",
    ],
)
def test_every_page_is_the_shell_with_its_parameters(
    client: TestClient, view_runs: ViewRuns, path: str
) -> None:
    url = path.format(dfsdt=view_runs.dfsdt, react=view_runs.react, reference=view_runs.reference)
    resp = client.get(url)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    assert 'src="/static/app.js"' in resp.text and "data-page=" in resp.text
    for name, kind in (("app.js", "javascript"), ("style.css", "css")):
        static = client.get(f"/static/{name}")
        assert static.status_code == 200 and kind in static.headers["content-type"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/nope",
        "/api/runs/nope/episodes",
        "/api/runs/{dfsdt}/episodes/no-such-task/0",
        f"/api/runs/{{dfsdt}}/episodes/{TREE_TASK}/7",
        f"/api/runs/{{dfsdt}}/episodes/{TREE_TASK}/one",
        "/api/runs/{dfsdt}/plots/manifest.json",
        "/api/runs/{react}/plots/pass_rate.png",  # that run was made without plots
        "/api/compare?runs={react},nope",
        "/api/leaderboard?reference=nope",
        "/api/nothing/here",
        "/static/app.py",
        "/runs/nope",
        f"/runs/nope/episodes/{TREE_TASK}/0",
        "/nothing",
    ],
)
def test_unknown_ids_are_404_with_a_message(
    client: TestClient, view_runs: ViewRuns, path: str
) -> None:
    url = path.format(dfsdt=view_runs.dfsdt, react=view_runs.react)
    resp = client.get(url)
    assert resp.status_code == 404, resp.text
    if url.startswith("/api/") or url.startswith("/static/"):
        assert resp.json()["detail"]
    else:
        assert "Not found" in resp.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/..%2F..%2Fetc%2Fpasswd",
        "/api/runs/%2e%2e/%2e%2e/etc/passwd",
        "/api/runs/%2Fetc",
        "/api/runs/{dfsdt}%2F..%2F{react}",
        "/api/runs/{dfsdt}/episodes/..%2F..%2F..%2Fmanifest.json/0",
        "/api/runs/{dfsdt}/plots/..%2Fmanifest.json",
        "/api/runs/{dfsdt}/plots/%2e%2e%2fscores.json",
        "/runs/..%2F..%2F..%2Fetc",
        "/static/..%2F__init__.py",
    ],
)
def test_path_traversal_in_ids_reaches_nothing(
    client: TestClient, view_runs: ViewRuns, path: str
) -> None:
    url = path.format(dfsdt=view_runs.dfsdt, react=view_runs.react)
    resp = client.get(url)
    assert resp.status_code == 404, (url, resp.status_code, resp.text[:200])
    assert "root:" not in resp.text and '"run_id"' not in resp.text


def test_unreadable_runs_are_listed_with_why_and_never_500(
    view_runs: ViewRuns, tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    good = copy_run(view_runs, view_runs.react, root, "good")
    bad = root / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json")
    torn = copy_run(view_runs, view_runs.react, root, "badscores")
    (torn / "scores.json").write_text('{"schema": 1}')
    broken = copy_run(view_runs, view_runs.react, root, "badlines")
    lines = (broken / "trajectories.jsonl").read_text().splitlines(keepends=True)
    (broken / "trajectories.jsonl").write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    client = TestClient(create_app(root), raise_server_exceptions=False)

    runs = {r["key"]: r for r in client.get("/api/runs").json()}
    assert runs["bad"]["status"] == "unreadable" and runs["bad"]["error"]
    assert runs["badscores"]["scored"] is False and "scores.json" in runs["badscores"]["error"]
    assert runs[good.name]["scored"]
    resp = client.get("/api/runs/bad")
    assert resp.status_code == 404 and "cannot be read" in resp.json()["detail"]
    assert client.get("/api/runs/badscores/episodes").status_code == 200
    resp = client.get("/api/runs/badlines/episodes")
    assert resp.status_code == 422 and "not a trajectory line" in resp.json()["detail"]


def test_a_run_in_progress_shows_each_episode_as_it_finishes(
    view_runs: ViewRuns, tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    run, lines = running_copy(view_runs, view_runs.react, root, "going")
    (run / "trajectories.jsonl").write_text(lines[0] + lines[1][:40])  # a torn second line
    client = TestClient(create_app(root), raise_server_exceptions=False)

    (entry,) = client.get("/api/runs").json()
    assert entry["status"] == "running" and entry["finished"] == 1 and entry["pass_rate"] is None
    assert client.get("/api/runs/going").json()["label_source"] == "live"
    rows = client.get("/api/runs/going/episodes").json()
    assert [r["status"] for r in rows][1:] == ["pending"] * 3
    assert rows[0]["label"] in ("solved", "unsolved") and rows[0]["reason"]

    with (run / "trajectories.jsonl").open("w") as fh:  # the writer finishes the line, then more
        fh.write("".join(lines[:3]))
    rows = client.get("/api/runs/going/episodes").json()
    assert [r["status"] != "pending" for r in rows] == [True, True, True, False]
    assert all(r["label"] for r in rows[:3])
    assert client.get("/api/runs").json()[0]["finished"] == 3


def test_a_replay_that_diverged_shows_where(view_runs: ViewRuns, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    recorded = copy_run(view_runs, view_runs.react, root, "recorded")
    trajs = [
        json.loads(line) for line in (recorded / "trajectories.jsonl").read_text().splitlines()
    ]
    first = trajs[1]
    call = first["nodes"][0]["calls"][0]
    call["observation"]["content"] = '{"error": "", "response": "edited after the fact"}'
    (recorded / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trajs))
    report = replay_run(recorded, out=root / "replays")
    assert report.divergent >= 1 and report.replay_run is not None
    client = TestClient(create_app(root), raise_server_exceptions=False)
    key = Path(report.replay_run).relative_to(root).as_posix()

    entry = next(r for r in client.get("/api/runs").json() if r["key"] == key)
    assert entry["replay_of"] == str(recorded)
    ep = client.get(f"/api/runs/{key}/episodes/{first['scenario_id']}/0").json()
    d = ep["divergence"]
    assert d["found"] and not d["identical"]
    assert d["first_diff"]["node"] == 0 and "observation" in d["first_diff"]["field"]
    assert "edited after the fact" in d["first_diff"]["expected"]
    same = client.get(f"/api/runs/{key}/episodes/{trajs[0]['scenario_id']}/0").json()
    assert same["divergence"]["identical"]
    shutil.rmtree(recorded)  # the recording is gone: the page says so instead of failing
    gone = client.get(f"/api/runs/{key}/episodes/{first['scenario_id']}/0").json()
    assert gone["divergence"]["found"] is False and gone["divergence"]["note"]


def test_a_task_id_with_a_slash_and_odd_characters_has_its_page(
    view_runs: ViewRuns, tmp_path: Path
) -> None:
    run = copy_run(view_runs, view_runs.react, tmp_path / "runs", "odd")
    trajs = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    odd = "G1/query 7 #1?x=%2F&y"
    trajs[0]["scenario_id"] = odd
    (run / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trajs))
    client = TestClient(create_app(tmp_path / "runs"), raise_server_exceptions=False)
    encoded = quote(odd, safe="")
    ep = client.get(f"/api/runs/odd/episodes/{encoded}/0")
    assert ep.status_code == 200 and ep.json()["trajectory"]["scenario_id"] == odd
    page = client.get(f"/runs/odd/episodes/{encoded}/0")
    assert page.status_code == 200 and 'data-page="episode"' in page.text
    assert client.get(f"/api/runs/odd/episodes/{quote('G1', safe='')}/0").status_code == 404
