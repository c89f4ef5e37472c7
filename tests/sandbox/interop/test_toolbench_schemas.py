"""The two ToolBench importers write the same schema (and category) for the same API.

The ToolBench answer files in ``../shared/data`` hold the functions ChatGPT was offered in 2023;
the query files (StableToolBench's test queries and ToolBench's example queries) document many of
the same APIs. Imported separately, every API both know gets the same function name, description
and parameters, exactly the function the answer file holds (StableToolBench's empty list entries
aside), and, with the query files given to the answer import, the same category.
"""

from __future__ import annotations

from pathlib import Path

from mock_tools.models import ApiRef, Task
from mock_tools.suite import Suite, load_suite
from sandbox.interop.toolbench_answers import import_answers
from sandbox.interop.toolbench_queries import import_queries
from sandbox.tool_envs.http import tool_functions


def _by_function(suite: Suite) -> dict[str, tuple[str, str]]:
    return {spec.function: pair for pair, spec in suite.apis.items() if spec.function}


def _offered(suite: Suite, pair: tuple[str, str]) -> dict:
    task = Task(id="t", query="q", tools=[ApiRef(tool=pair[0], api=pair[1])])
    functions, _ = tool_functions(task, suite.apis)
    return functions[0]["function"]


def test_answer_and_query_imports_agree_on_every_shared_api(
    shared_data: Path, tmp_path: Path
) -> None:
    stb = shared_data / "stabletoolbench/solvable_queries/test_instruction"
    tb = shared_data / "toolbench/data_example"
    queries = [*sorted(stb.glob("*.json")), tb / "instruction/G1_query.json"]
    queries.append(tb / "instruction/G2_query.json")
    import_queries(queries, tmp_path / "q")
    answers = [tb / "answer/G1_answer", tb / "answer/G2_answer"]
    import_answers(answers, tmp_path / "a", queries=queries)
    q, a = load_suite(tmp_path / "q"), load_suite(tmp_path / "a")
    in_q, in_a = _by_function(q), _by_function(a)
    shared = sorted(set(in_q) & set(in_a))
    assert len(shared) == 15  # the APIs the answer files offered that a query file documents
    for name in shared:
        spec_q, spec_a = q.apis[in_q[name]], a.apis[in_a[name]]
        assert spec_q.description == spec_a.description, name
        assert spec_q.parameters == spec_a.parameters, name
        assert _offered(q, in_q[name]) == _offered(a, in_a[name]), name
        assert q.tools[in_q[name][0]].category == a.tools[in_a[name][0]].category, name
    for name in shared:  # and it is the function the answer file holds
        offered = next(
            f["function"]
            for t in a.tasks
            for f in _functions_of(tmp_path / "a", t.id)
            if f["function"]["name"] == name
        )
        assert _offered(a, in_a[name]) == offered, name


def _functions_of(suite_dir: Path, task_id: str) -> list[dict]:
    from sandbox.store import read_trajectories

    run = suite_dir / "original-runs" / "DFS_woFilter_w2"
    return next(t.functions for t in read_trajectories(run) if t.scenario_id == task_id)
