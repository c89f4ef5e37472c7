"""APIs whose function names collide after ToolBench's 64-character cut, on StableToolBench's
own test queries (``../shared/data``).

What it protects: under the presets (``function_names: toolbench``) a task offers every API
under ToolBench's name, a repeated name as often as ToolBench's client repeats it, and a call of
that name reaches the API ToolBench's request names: the first such function's tool and the
last API offered under the name (``rapidapi_wrapper``'s ``api_name_reflect`` keeps the last).
By default the later APIs get ``_2``, ``_3`` and each stays reachable. Checked against
StableToolBench's own ``rapidapi_wrapper`` run on the same queries outside the project: it
offers 10, 5, 7 and 6 functions for these four tasks and routes each repeated name as here."""

from __future__ import annotations

import pytest

from mock_tools.suite import Suite, load_suite
from sandbox.interop.toolbench_queries import import_queries
from sandbox.tool_envs.http import tool_functions
from tests.sandbox.interop.conftest import DATA

TASKS = {  # task id: offered functions (Finish aside), repeated names among them
    "G1_instruction-27847": (10, 3),
    "G1_instruction-79053": (5, 1),
    "G1_tool-9039": (7, 1),
    "G2_instruction-27543": (6, 1),
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    if not DATA.is_dir():
        pytest.skip(f"real benchmark data not found at {DATA.resolve()} (only present in CI)")
    folder = DATA / "stabletoolbench/solvable_queries/test_instruction"
    files = [folder / f"{name}.json" for name in ("G1_instruction", "G1_tool", "G2_instruction")]
    out = tmp_path_factory.mktemp("stb") / "suite"
    import_queries(files, out)
    return load_suite(out)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_toolbench_offers_every_api_under_its_own_name(suite: Suite, task_id: str) -> None:
    task = next(t for t in suite.tasks if t.id == task_id)
    functions, targets = tool_functions(task, suite.apis, function_names="toolbench")
    names = [f["function"]["name"] for f in functions]
    count, repeated = TASKS[task_id]
    assert len(names) == count == len(task.tools)
    assert len(names) - len(set(names)) >= repeated and len(set(names)) == len(targets)
    for name, (tool, api) in targets.items():
        offered = [
            (ref.tool, ref.api) for ref, n in zip(task.tools, names, strict=True) if n == name
        ]
        assert (tool, api) == (offered[0][0], offered[-1][1])  # first tool, last API
    unique, plain = tool_functions(task, suite.apis)
    assert len(unique) == len(plain) == count  # by default every API its own name
    assert any(f["function"]["name"].endswith("_2") for f in unique)


def test_a_repeated_name_reaches_the_api_toolbench_requests(suite: Suite) -> None:
    """27847: three APIs cut to one name; ToolBench's request names the third, Today's."""
    task = next(t for t in suite.tasks if t.id == "G1_instruction-27847")
    _, targets = tool_functions(task, suite.apis, function_names="toolbench")
    name = "e_vip_btts_goal_goal_for_get_168predict_vip_football_predictions"
    assert targets[name][1] == "Today Sure VIP BTTS/Goal Goal"
    assert targets["e_vip_over_2_5_goals_for_get_168predict_vip_football_predictions"][1] == (
        "Today Sure VIP Over 2.5 Goals"
    )
