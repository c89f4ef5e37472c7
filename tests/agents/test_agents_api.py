"""The public surface of agents is pinned, loads lazily, and never reaches into the harness."""

import subprocess
import sys

import agents

EXPECTED = {
    "Agent",
    "AgentOptions",
    "BaseAgent",
    "Budget",
    "ChainEnd",
    "ChainHooks",
    "DFSDTAgent",
    "Episode",
    "EpisodeEnd",
    "EpisodeMeta",
    "Model",
    "Node",
    "Observation",
    "ReActAgent",
    "ReActAtN",
    "STRATEGIES",
    "Status",
    "ToolCall",
    "ToolEnv",
    "Trajectory",
    "Turn",
    "Usage",
    "build_agent",
    "episode_end",
    "fallback_end",
    "register_strategy",
    "resolve_strategy",
    "run_chain",
    "successful_observations",
}


def test_all_is_pinned_and_importable() -> None:
    assert set(agents.__all__) == EXPECTED
    for name in agents.__all__:
        assert getattr(agents, name) is not None


def test_agents_stands_alone_and_loads_lazily() -> None:
    code = (
        "import sys, agents.trajectory; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sandbox', 'mock_tools'))); "
        "print('agents.dfsdt' in sys.modules, 'openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "False False"]
