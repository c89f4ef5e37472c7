from _step_builders import APIS, call, chain

from agents.trajectory import EpisodeUsage, Node
from mock_tools.names import NameResolver
from sandbox.eval.steps.actions import actions_of, episode_path
from sandbox.eval.steps.efficiency import efficiency, redundant_calls, tree_stats

RESOLVER = NameResolver(APIS.keys())


def test_counts_from_nodes_when_usage_is_empty():
    geo = call("maps", "geocode", {"address": "Paris"})
    traj = chain([("a", [geo]), ("b", [geo, call("maps", "geocode", {"address": " Paris"})])])
    traj.nodes[0].usage.prompt_tokens = 10
    traj.nodes[1].usage.completion_tokens = 5
    path = episode_path(traj)
    e = efficiency(traj, actions_of(path, APIS, RESOLVER))
    assert e.model_calls == 3 and e.tool_calls == 3  # Finish is not a tool call
    assert e.redundant_calls == 2  # " Paris" canonicalises to "Paris"
    assert (e.prompt_tokens, e.completion_tokens, e.total_tokens) == (10, 5, 15)


def test_usage_totals_win_when_present():
    traj = chain([("a", [call("maps", "geocode", {"address": "Paris"})])])
    traj.usage = EpisodeUsage(
        model_calls=7, tool_calls=4, prompt_tokens=100, cost=0.5, wall_seconds=2
    )
    e = efficiency(traj, [])
    assert (e.model_calls, e.tool_calls, e.prompt_tokens, e.cost, e.wall_seconds) == (
        7,
        4,
        100,
        0.5,
        2.0,
    )


def test_tree_stats_derived_and_recorded():
    geo = call("maps", "geocode", {"address": "Paris"})
    traj = chain([("a", [geo])], finish=False)
    # DFSDT-like: 0 -> 1 (dead end), back to 0 -> 2, then 2 -> 3
    traj.nodes += [
        Node(id=1, parent=0, depth=2, kind="give_up"),
        Node(id=2, parent=0, depth=2, kind="action", calls=[geo]),
        Node(id=3, parent=2, depth=3, kind="finish"),
    ]
    traj.chosen_path = [0, 2, 3]
    s = tree_stats(traj, episode_path(traj))
    assert (s.nodes, s.chosen_length, s.backtracks, s.max_depth) == (4, 3, 1, 3)
    traj.tree = {"backtracks": 5, "max_depth": 9}
    s = tree_stats(traj, episode_path(traj))
    assert (s.backtracks, s.max_depth) == (5, 9)


def test_redundant_calls_empty():
    assert redundant_calls([]) == 0
