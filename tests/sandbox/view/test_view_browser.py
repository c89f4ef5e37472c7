"""The viewer in a real browser: Debian's Chromium driven by Playwright, against the viewer served
by uvicorn on 127.0.0.1 and against a static export opened from the file system.

Each test opens pages of runs made in the test, checks what a user sees (the rows, the tree's
nodes, a node's observation after a click, the final answer, the runs side by side; in a world,
the state checks, each call's changes and the final state against the gold one), that the
page logged no console error, and saves a screenshot in its tmp dir. They skip, saying why, when
Playwright (the ``browser`` extra) or Chromium is missing; ``.ci/run`` installs both.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TASKS, TREE_TASK, ViewRuns, copy_run, running_copy

from sandbox.view.app import create_app
from sandbox.view.export import export_static
from sandbox.view.viewer import Viewer

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="Playwright is not installed: pip install -e '.[browser]' (the browser extra)",
)
CHROMIUM = os.environ.get("SANDBOX_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    pytest.skip(
        f"Chromium not found at {CHROMIUM}: apt-get install chromium (or set SANDBOX_CHROMIUM)",
        allow_module_level=True,
    )
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Served:
    """The viewer of a folder on a free port of 127.0.0.1, in a thread."""

    def __init__(self, root: Path) -> None:
        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(root), log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]})
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the viewer did not start")
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        yield context
        context.close()


@pytest.fixture(scope="module")
def served(view_runs: ViewRuns) -> Iterator[Served]:
    server = Served(view_runs.root)
    yield server
    server.close()


class Page:
    """A fresh tab that records console errors and failed requests."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def open(self, url: str, ready: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector(ready, timeout=10_000)
        return self.page

    def done(self, shot: Path) -> None:
        self.page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 5000
        assert self.errors == []
        self.page.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    page = Page(browser)
    yield page
    if not page.page.is_closed():
        page.page.close()


def test_the_runs_page_lists_the_runs_and_filters(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    page = tab.open(served.url + "/", "#runs tr.run-row")
    keys = page.locator("#runs tr.run-row").evaluate_all("rows => rows.map(r => r.dataset.key)")
    assert sorted(keys) == sorted([view_runs.dfsdt, view_runs.react, view_runs.reference])
    assert "100.0%" in page.locator(f'tr[data-key="{view_runs.reference}"]').inner_text()
    page.fill("#run-filter", "dfsdt")
    assert page.locator("#runs tr.run-row").count() == 1
    page.click(f'tr[data-key="{view_runs.dfsdt}"] a.run-link')
    page.wait_for_selector("#episode-table tr.episode-row")
    assert page.url.endswith(f"/runs/{view_runs.dfsdt}")
    tab.done(tmp_path / "runs.png")


def test_a_run_page_shows_scores_plots_and_filters_episodes(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    page = tab.open(f"{served.url}/runs/{view_runs.react}", "#episode-table tr.episode-row")
    assert "Pass rate 75.0%" in page.inner_text("#pass-rate")
    assert page.locator("#episode-table tr.episode-row").count() == len(TASKS)
    page.click('button[data-filter="gave_up"]')
    shown = page.locator("#episode-table tr.episode-row")
    gave_up = [t for t in view_runs.trajectories(view_runs.react) if t["status"] == "gave_up"]
    assert shown.count() == len(gave_up) >= 1
    assert sorted(shown.evaluate_all("rows => rows.map(r => r.dataset.task)")) == sorted(
        t["scenario_id"] for t in gave_up
    )
    tab.done(tmp_path / "run.png")

    tab2 = Page(tab.page.context)
    plots = tab2.open(f"{served.url}/runs/{view_runs.dfsdt}", "#plots img")
    plots.wait_for_function("[...document.querySelectorAll('#plots img')].every(i => i.complete)")
    widths = plots.locator("#plots img").evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
    assert len(widths) == 3 and all(w > 100 for w in widths)
    tab2.done(tmp_path / "run-plots.png")


def test_a_dfsdt_episode_shows_its_tree_and_a_nodes_observation_on_click(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    traj = next(t for t in view_runs.trajectories(view_runs.dfsdt) if t["scenario_id"] == TREE_TASK)
    url = f"{served.url}/runs/{view_runs.dfsdt}/episodes/{TREE_TASK}/0"
    page = tab.open(url, "#tree .tree-node")
    ids = page.locator("#tree .tree-node").evaluate_all("g => g.map(n => +n.dataset.node)")
    assert ids == [n["id"] for n in traj["nodes"]]  # every node, in expansion order
    on_path = page.locator("#tree .tree-node.on-path").evaluate_all(
        "g => g.map(n => +n.dataset.node)"
    )
    assert on_path == traj["chosen_path"]
    give_ups = [n["id"] for n in traj["nodes"] if n["kind"] == "give_up"]
    assert page.locator("#tree .tree-node.give-up").count() == len(give_ups) >= 1
    assert page.locator("#tree .tree-node.pruned").count() == len(traj["nodes"]) - len(on_path)
    assert page.locator("#tree .tree-node.depth-cut").count() >= 1
    assert page.inner_text("#final-answer") == traj["final_answer"]
    assert "solved" in page.inner_text("#label")

    # a pruned node that failed: its observation shows in the detail panel on click
    node = next(
        n
        for n in traj["nodes"]
        if n["id"] not in traj["chosen_path"]
        and n["calls"]
        and not n["calls"][0]["observation"]["ok"]
    )
    error = json.loads(node["calls"][0]["observation"]["content"])["error"]
    page.click(f"#tree-node-{node['id']}")
    detail = page.locator("#node-detail")
    assert f"Step {node['id']}" in detail.inner_text() and error in detail.inner_text()
    assert "pruned" in detail.inner_text()
    assert page.locator(f"#tree-node-{node['id']}.selected").count() == 1
    tab.done(tmp_path / "episode-tree.png")


def test_compare_shows_the_tasks_where_runs_differ(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    url = f"{served.url}/compare?runs={view_runs.react},{view_runs.dfsdt}"
    page = tab.open(url, "#compare-table")
    labels = {
        k: {lb["task_id"]: lb["label"] for lb in view_runs.scores(k)["labels"]}
        for k in (view_runs.react, view_runs.dfsdt)
    }
    differing = page.locator("tr.compare-row").evaluate_all("rows => rows.map(r => r.dataset.task)")
    assert TREE_TASK in differing
    assert labels[view_runs.react][TREE_TASK] != labels[view_runs.dfsdt][TREE_TASK]
    row = page.locator(f'tr.compare-row[data-task="{TREE_TASK}"]')
    assert "win" in row.inner_text() and "first difference at step" in row.inner_text()
    assert "against" in page.inner_text("#tallies")
    page.uncheck("#only-differing")
    assert page.locator("tr.compare-row").count() == len(TASKS)
    tab.done(tmp_path / "compare.png")


def test_the_leaderboard_page_and_its_reference(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    page = tab.open(f"{served.url}/leaderboard", "tr.board-row")
    assert page.locator("tr.board-row").count() == 3
    page.select_option("#reference", view_runs.reference)
    page.wait_for_url(f"**/leaderboard?reference={view_runs.reference}")
    page.wait_for_selector("tr.board-row .badge.reference")
    assert "W/L/T" in page.inner_text("table.leaderboard")
    tab.done(tmp_path / "leaderboard.png")


def test_a_run_in_progress_updates_as_episodes_finish(
    view_runs: ViewRuns, browser: Any, tmp_path: Path
) -> None:
    run, lines = running_copy(view_runs, view_runs.react, tmp_path / "runs", "going")
    (run / "trajectories.jsonl").write_text(lines[0])
    server = Served(tmp_path / "runs")
    try:
        tab = Page(browser)
        page = tab.open(f"{server.url}/runs/going", "#episode-table tr.episode-row")
        linked = "#episode-table tr.episode-row td:first-child a"
        assert page.locator(linked).count() == 1  # one finished, three pending
        with (run / "trajectories.jsonl").open("a") as fh:
            fh.write(lines[1])
        page.wait_for_function(
            f"document.querySelectorAll('{linked}').length === 2", timeout=10_000
        )
        assert "live" in page.inner_text("#live-status")
        tab.done(tmp_path / "live.png")
    finally:
        server.close()


def test_a_static_export_opens_from_the_file_system(
    view_runs: ViewRuns, browser: Any, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    summary = export_static(Viewer(view_runs.root), [], out)
    assert summary.runs == 3 and summary.episodes == 3 * len(TASKS)
    tab = Page(browser)
    page = tab.open((out / "index.html").as_uri(), "#runs tr.run-row")
    assert page.locator("#runs tr.run-row").count() == 3
    page.click(f'tr[data-key="{view_runs.dfsdt}"] a.run-link')
    page.wait_for_selector("#episode-table tr.episode-row")
    page.click(f'tr.episode-row[data-task="{TREE_TASK}"] a')
    page.wait_for_selector("#tree .tree-node")
    assert page.url.startswith("file://") and page.url.endswith(f"/{TREE_TASK}/0.html")
    traj = next(t for t in view_runs.trajectories(view_runs.dfsdt) if t["scenario_id"] == TREE_TASK)
    assert page.locator("#tree .tree-node").count() == len(traj["nodes"])
    assert page.inner_text("#final-answer") == traj["final_answer"]
    page.click("#run-link")
    page.wait_for_selector("#plots img")
    tab.done(tmp_path / "export.png")
    for name in ("leaderboard.html", "compare.html"):
        other = Page(browser)
        other.open((out / name).as_uri(), "table.grid")
        other.done(tmp_path / f"export-{name}.png")


# -- a world: state checks, each call's changes, the final state against the gold state --------

TINYWORLD = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "tinyworld"


@pytest.fixture(scope="module")
def world_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    """DFSDT and ReAct with noisy-reference:0.5 on the tiny world, three trials each."""
    from sandbox.run import run_suite
    from sandbox.store import RunConfig

    root = tmp_path_factory.mktemp("world") / "runs"

    def make(agent: str) -> None:
        config = RunConfig(
            suite=str(TINYWORLD),
            agent=agent,
            model="noisy-reference:0.5",
            trials=3,
            out=str(root),
            run_id=f"world-{agent}",
        )
        run_suite(config, show_progress=False, plots=False)

    for agent in ("dfsdt", "react"):  # in a thread: Playwright's loop may run in this one
        maker = threading.Thread(target=make, args=(agent,))
        maker.start()
        maker.join()
    assert (root / "world-react" / "scores.json").is_file()
    server = Served(root)
    yield server, root
    server.close()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _shown(iv: dict) -> str:
    """An interval as the page's ``interval`` writes it."""
    return f"{100 * iv['value']:.1f}% [{100 * iv['low']:.1f}%, {100 * iv['high']:.1f}%]"


def test_a_world_run_page_lists_its_state_checks(
    world_runs: tuple[Served, Path], tab: Page, tmp_path: Path
) -> None:
    served, root = world_runs
    scores = json.loads((root / "world-dfsdt" / "scores.json").read_text())["state_checks"]
    page = tab.open(f"{served.url}/runs/world-dfsdt", "#state-check-table tr.state-check")
    rows = page.locator("#state-check-table tr.state-check")
    rates = [scores["all"], *scores["checks"]]
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.check)") == [r["check"] for r in rates]
    for r in rates:
        row = page.locator(f'#state-check-table tr[data-check="{r["check"]}"]')
        cells = row.locator("td").all_inner_texts()
        assert cells[1:4] == [str(r["episodes"]), str(r["passed"]), _shown(r["rate"])]
        hat = " ".join(row.locator('td[data-col="pass^3"]').inner_text().split())
        assert hat == _shown(r["pass_hat_k"]["3"])  # the value, the interval under it
    page.click("#task-checks summary")
    tasks = page.locator("#task-checks tr.task-check")
    assert tasks.count() == len(scores["tasks"]) >= 3
    failing = [t for t in scores["tasks"] if t["passed"] < t["episodes"]]
    assert page.locator("#task-checks tr.task-check.failing").count() == len(failing) >= 1
    tab.done(tmp_path / "world-run.png")


def _diff_value(value: object) -> str:
    """A value of the final-vs-gold diff as the page shows it (``∅``: absent)."""
    return "∅" if value == "<absent>" else json.dumps(value)


def _pruned_write(trajs: list[dict]) -> tuple[dict, dict, int, dict]:
    """An episode with a write on an abandoned branch: the trajectory, the node, the call's
    place and the call."""
    for t in trajs:
        for n in t["nodes"]:
            if n["id"] in t["chosen_path"]:
                continue
            for i, c in enumerate(n["calls"]):
                if (c.get("observation") or {}).get("changes"):
                    return t, n, i, c
    raise AssertionError("no DFSDT episode of the seeded run wrote on an abandoned branch")


def test_a_world_episode_shows_each_calls_changes_and_the_final_state_against_gold(
    world_runs: tuple[Served, Path], tab: Page, tmp_path: Path
) -> None:
    served, root = world_runs
    trajs = _lines(root / "world-dfsdt" / "trajectories.jsonl")
    traj, node, at, call = _pruned_write(trajs)
    url = f"{served.url}/runs/world-dfsdt/episodes/{traj['scenario_id']}/{traj['trial']}"
    page = tab.open(url, "#world")
    state = call["observation"]["state"]
    box = page.locator(f"#step-{node['id']} .world-call").nth(
        sum(1 for c in node["calls"][:at] if (c.get("observation") or {}).get("state"))
    )
    assert box.get_attribute("data-state") == state
    # a world call's answer comes from the world (before: badged as an error)
    assert page.locator(f"#step-{node['id']} .call .badge.prov-world").count() >= 1
    assert box.locator(".state-hash").inner_text() == state[:12]
    records = box.locator("li.record-change")
    assert records.evaluate_all("rs => rs.map(r => r.dataset.record)") == [
        f"{c['collection']}/{c['id']}" for c in call["observation"]["changes"]
    ]
    changed = next(
        c for c in call["observation"]["changes"] if c["before"] is not None and c["after"]
    )
    field = next(k for k in changed["after"] if changed["before"].get(k) != changed["after"][k])
    text = box.locator(f'li[data-record="{changed["collection"]}/{changed["id"]}"]').inner_text()
    before, after = (json.dumps(changed[side][field]) for side in ("before", "after"))
    assert f"{field} {before} → {after}" in text
    # every call that reached the world has its box, in the steps and in the tree's panel
    reached = sum(
        1 for n in traj["nodes"] for c in n["calls"] if (c.get("observation") or {}).get("state")
    )
    assert page.locator("#steps .world-call").count() == reached
    page.click(f"#tree-node-{node['id']}")
    assert page.locator("#node-detail .world-call").count() >= 1
    # the end: the hashes and each check as the trajectory recorded them
    world = traj["world"]
    assert world["final"][:12] in page.inner_text("#world-hashes")
    checks = page.locator("#world-checks li")
    assert checks.all_inner_texts() == [
        f"{'✓' if c['passed'] else '✗'} {c['kind']}: {c['detail']}" for c in world["checks"]
    ]
    tab.done(tmp_path / "world-episode.png")

    # an episode whose final state is not the gold one: its diff, path by path
    failed = next(t for t in trajs if (t.get("world") or {}).get("diff"))
    tab2 = Page(tab.page.context)
    url = f"{served.url}/runs/world-dfsdt/episodes/{failed['scenario_id']}/{failed['trial']}"
    page = tab2.open(url, "#gold-diff")
    diff = failed["world"]["diff"]
    expected = [(kind, e["path"]) for kind in ("collateral", "missed", "wrong") for e in diff[kind]]
    rows = page.locator("#gold-diff tr.gold-diff")
    assert rows.evaluate_all("rs => rs.map(r => [r.dataset.kind, r.dataset.path])") == [
        list(e) for e in expected
    ]
    first_kind, first = next((k, e) for k in ("collateral", "missed", "wrong") for e in diff[k])
    cells = rows.first.locator("td").all_inner_texts()
    assert cells == [
        first_kind,
        first["path"],
        _diff_value(first["initial"]),
        _diff_value(first["final"]),
        _diff_value(first["gold"]),
    ]
    tab2.done(tmp_path / "world-diff.png")


def test_the_leaderboard_of_a_world_suite_has_its_state_checks(
    world_runs: tuple[Served, Path], tab: Page, tmp_path: Path
) -> None:
    served, root = world_runs
    page = tab.open(f"{served.url}/leaderboard", "table.state-board tr.state-board-row")
    rows = page.locator("table.state-board tr.state-board-row")
    assert rows.count() == 2
    ranked = page.locator("tr.board-row td:nth-child(3)").all_inner_texts()
    for place, agent in enumerate(ranked):
        checks = json.loads((root / f"world-{agent}" / "scores.json").read_text())["state_checks"]
        row = rows.nth(place)
        for r in [checks["all"], *checks["checks"]]:
            cell = row.locator(f'td[data-check="{r["check"]}"]').inner_text()
            assert cell.startswith(f"{_shown(r['rate'])} ({r['passed']}/{r['episodes']})")
            assert f"pass^3 {100 * r['pass_hat_k']['3']['value']:.1f}%" in cell
    tab.done(tmp_path / "world-leaderboard.png")


# -- at 1,400 px, what a reader must see without hunting for it (issue 38) -----------------------


def _boxes(page: Any, selector: str) -> list[list[float]]:
    return page.locator(selector).evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })"
    )


def test_the_trees_captions_never_overlap(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    traj = next(t for t in view_runs.trajectories(view_runs.dfsdt) if t["scenario_id"] == TREE_TASK)
    url = f"{served.url}/runs/{view_runs.dfsdt}/episodes/{TREE_TASK}/0"
    page = tab.open(url, "#tree .node-caption")
    assert page.viewport_size["width"] == 1400
    boxes = _boxes(page, "#tree .node-caption")
    assert len(boxes) == len(traj["nodes"]) == 17
    overlapping = [
        (i, j)
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[i + 1 :], i + 1)
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]
    assert overlapping == []  # the leaf row's neighbours once overlapped
    tab.done(tmp_path / "tree-captions.png")


def test_the_leaderboard_keeps_its_figures_on_screen_however_many_runs_a_row_pools(
    view_runs: ViewRuns, browser: Any, tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    for seed in range(8):
        run = copy_run(view_runs, view_runs.react, root, f"react-noisy-with-a-long-run-name-{seed}")
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["seed"] = seed
        (run / "manifest.json").write_text(json.dumps(manifest))
    copy_run(view_runs, view_runs.reference, root, "react-ref")
    server = Served(root)
    try:
        tab = Page(browser)
        page = tab.open(f"{server.url}/leaderboard", "tr.board-row")
        width = page.viewport_size["width"]
        assert width == 1400
        pooled = page.locator("tr.board-row", has_text="noisy-reference:0.5")
        assert pooled.locator("td.pass-rate").inner_text().startswith("75.0%")
        for cell in ("td.pass-rate", "td.pass-at-k", "td.step-score"):
            right = pooled.locator(cell).first.evaluate("c => c.getBoundingClientRect().right")
            assert right <= width, f"{cell} ends at {right} px, off-screen"
        assert pooled.locator(".run-list summary").inner_text() == "8 runs"
        assert pooled.locator(".run-list a").first.is_hidden()
        pooled.locator(".run-list summary").click()
        assert pooled.locator(".run-list a").count() == 8
        headline = page.locator("tr.board-row").first.locator("td.step-score").count()
        page.check("#all-measures")
        assert page.locator("tr.board-row").first.locator("td.step-score").count() > headline
        tab.done(tmp_path / "leaderboard-wide.png")
    finally:
        server.close()


def test_compare_says_in_words_what_the_baseline_lacks(
    served: Served, view_runs: ViewRuns, tab: Page, tmp_path: Path
) -> None:
    url = f"{served.url}/compare?runs={view_runs.react},{view_runs.dfsdt}"
    page = tab.open(url, "#compare-table .first-diff")
    diff = page.locator(f'tr.compare-row[data-task="{TREE_TASK}"] .first-diff').inner_text()
    assert "(node): baseline no such step · this run action" in diff  # DFSDT searched on
    assert "None" not in page.inner_text("#compare-table")
    tab.done(tmp_path / "compare-words.png")


def test_a_run_page_filters_the_episodes_that_outgrew_the_context(
    view_runs: ViewRuns, browser: Any, tmp_path: Path
) -> None:
    run = copy_run(view_runs, view_runs.react, tmp_path / "runs", "overflow")
    trajs = view_runs.trajectories(view_runs.react)
    for t in trajs:
        if t["scenario_id"] == TREE_TASK:
            t["status"] = "context_overflow"
    (run / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trajs))
    server = Served(tmp_path / "runs")
    try:
        tab = Page(browser)
        page = tab.open(f"{server.url}/runs/overflow", "#episode-table tr.episode-row")
        button = page.locator('button.filter[data-filter="context_overflow"]')
        assert button.inner_text() == "context overflow (1)"
        button.click()
        shown = page.locator("#episode-table tr.episode-row")
        assert shown.evaluate_all("rows => rows.map(r => r.dataset.task)") == [TREE_TASK]
        assert "context_overflow" in shown.first.inner_text()
        tab.done(tmp_path / "run-overflow.png")
    finally:
        server.close()


# -- a conversation: a chat with the calls and their state diffs inline ---------------------------


def _persona_endpoint(body: dict[str, Any]) -> Any:
    from tests.agents.models.openai_server import text_reply, tool_call_reply

    last = body["messages"][-1]["content"]
    if "Which account" in last:
        return text_reply("It is A-2.")
    if "Shall I" in last:
        return text_reply("Yes, do it.")
    return tool_call_reply("end_conversation", {"reason": "done"})


@pytest.fixture(scope="module")
def chat_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    """The tiny world's two conversations with ReAct and the reference: the persona played by a
    user model on an endpoint (``chat-live``), then again from that run's user record with the
    endpoint stopped (``chat-record``)."""
    from sandbox.cli import main
    from tests.agents.models.openai_server import ScriptedOpenAIServer

    base = tmp_path_factory.mktemp("chat")
    root = base / "runs"
    suite = shutil.copytree(TINYWORLD, base / "bank")
    argv = ["run", "--suite", str(suite), "--tasks", "chat_*", "--model", "reference"]
    argv += ["--out", str(root), "--no-plots", "--user-record", str(base / "users.jsonl")]
    codes: list[int] = []

    def make(run_id: str, user: str, *more: str) -> None:
        codes.append(main([*argv, "--user-model", user, "--run-id", run_id, *more]))

    with ScriptedOpenAIServer() as server:
        server.default = _persona_endpoint
        user = f"openai:u@{server.base_url}"
        maker = threading.Thread(target=make, args=("chat-live", user))  # Playwright's loop
        maker.start()
        maker.join()
    # the endpoint is gone: the record answers, and a miss would be the user's failure
    maker = threading.Thread(target=make, args=("chat-record", user, "--user-miss", "error"))
    maker.start()
    maker.join()
    assert codes == [0, 0]
    server = Served(root)
    yield server, root
    server.close()


def test_a_conversation_shows_as_a_chat_with_its_calls_and_their_state_diffs(
    chat_runs: tuple[Served, Path], tab: Page, tmp_path: Path
) -> None:
    served, root = chat_runs
    freeze = next(
        t
        for t in _lines(root / "chat-live" / "trajectories.jsonl")
        if t["scenario_id"] == "chat_freeze_which"
    )
    page = tab.open(f"{served.url}/runs/chat-live/episodes/chat_freeze_which/0", "#conversation")
    said = page.locator("#conversation .chat-msg")
    assert said.evaluate_all("ms => ms.map(m => m.className.split(' ')[1])") == [
        "chat-user",
        "chat-agent",
        "chat-user",
        "chat-agent",
        "chat-user",
        "chat-agent",
        "chat-user",
    ]
    users = page.locator("#conversation .chat-user")
    assert users.evaluate_all("ms => ms.map(m => m.dataset.source)") == [
        "task",
        "live",
        "live",
        "live",
    ]
    assert users.nth(1).locator(".chat-text").inner_text() == "It is A-2."
    assert "ended: done" in users.nth(3).inner_text()
    agent = page.locator("#conversation .chat-agent .chat-text").all_inner_texts()
    assert agent == [
        "Which account id should I freeze?",
        "Shall I set account A-2 to frozen?",
        "Account A-2 is frozen now.",
    ]
    # the call between the user's yes and the answer, with what it changed in the world
    calls = page.locator("#conversation .chat-calls .chat-call")
    assert calls.count() == 1 and "set_frozen" in calls.inner_text()
    write = next(c for n in freeze["nodes"] for c in n["calls"] if c["name"].startswith("set_"))
    box = calls.locator(".world-call")
    assert box.get_attribute("data-state") == write["observation"]["state"]
    assert "frozen ∅ → true" in box.locator('li[data-record="accounts/A-2"]').inner_text()
    # every user turn's mark says where it came from
    assert users.nth(1).locator(".badge.src").get_attribute("title") == (
        "the user model, asked during the run"
    )
    tab.done(tmp_path / "chat-live.png")

    tab2 = Page(tab.page.context)
    page = tab2.open(f"{served.url}/runs/chat-record/episodes/chat_freeze_which/0", "#conversation")
    sources = page.locator("#conversation .chat-user").evaluate_all(
        "ms => ms.map(m => m.dataset.source)"
    )
    assert sources == ["task", "record", "record", "record"]
    tab2.done(tmp_path / "chat-record.png")

    tab3 = Page(tab.page.context)
    page = tab3.open(f"{served.url}/runs/chat-live/episodes/chat_rent_then_more/0", "#conversation")
    sources = page.locator("#conversation .chat-user").evaluate_all(
        "ms => ms.map(m => m.dataset.source)"
    )
    assert sources == ["task", "script", "script"]
    assert page.locator("#conversation .chat-calls .world-call").count() == 2  # two transfers
    tab3.done(tmp_path / "chat-script.png")
    # an episode without a user has no chat
    tab4 = Page(tab.page.context)
    served_world = tab4.open(f"{served.url}/runs/chat-live", "#scores")
    assert served_world.locator("#conversation").count() == 0
    tab4.done(tmp_path / "chat-run.png")
