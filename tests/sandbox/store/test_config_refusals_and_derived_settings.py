"""``RunConfig`` refuses what cannot run with the one line a user reads, reads a recorded config
without re-checking what may have changed since, and derives the offline re-run, the faults, a
task's strategy and budget as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from mock_tools.models import FAULT_KINDS, FaultConfig
from sandbox.store.config import (
    MAX_PROMPT_BYTES,
    RECORDED,
    RunConfig,
    TaskSettings,
    check_run_id,
    read_prompt_file,
)
from sandbox.store.error_text import first_error


def _refusal(data: dict[str, Any], context: dict[str, Any] | None = None) -> str:
    with pytest.raises(ValidationError) as caught:
        RunConfig.model_validate(data, context=context)
    return first_error(caught.value, limit=400)


def test_a_run_id_must_be_a_plain_folder_name() -> None:
    for good in ("a", "0-run_1.2@x+y=z", "a" * 128):
        assert check_run_id(good) == good
    for bad in (".", "..", "-a", "a/b", "", "a" * 129, "é"):
        with pytest.raises(ValueError) as caught:
            check_run_id(bad)
        assert str(caught.value) == (
            f"run id {bad[:60]!r} is not a folder name: use letters, digits and . _ @ + = -, "
            "starting with a letter or digit, 128 characters at most"
        )
    assert _refusal({"output": {"run_id": "../x"}}).startswith(
        "output.run_id: run id '../x' is not a folder name"
    )


def test_a_prompt_file_is_read_whole_or_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(path))
    assert str(caught.value) == f"no such file {str(path)!r}"
    assert read_prompt_file(str(path), missing_ok=True) is None
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(path))
    assert str(caught.value) == f"{str(path)!r} is not UTF-8 text"
    path.write_text(" \n\t")
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(path))
    assert str(caught.value) == f"{str(path)!r} is empty"
    path.write_bytes(b"x" * (MAX_PROMPT_BYTES + 1))
    with pytest.raises(ValueError, match=f"is over {2**20} bytes, the most it may hold"):
        read_prompt_file(str(path))
    path.write_text("Be brief.\n")
    assert read_prompt_file(str(path)) == "Be brief.\n"
    locked = tmp_path / "locked"
    locked.mkdir()
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(locked))
    assert str(caught.value) == f"cannot read {str(locked)!r}: Is a directory"
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(tmp_path / "f" / "x"))
    assert str(caught.value) == f"no such file {str(tmp_path / 'f' / 'x')!r}"
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError) as caught:
        read_prompt_file(str(tmp_path / "f" / "x"))
    assert str(caught.value) == f"cannot read {str(tmp_path / 'f' / 'x')!r}: Not a directory"


def test_the_system_prompt_file_becomes_the_option_and_must_agree_with_a_given_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.txt"
    path.write_text("Use tools.\n")
    agent = RunConfig.model_validate({"agent": {"system_prompt_file": str(path)}}).agent
    assert agent.options == {"system_prompt": "Use tools.\n"}
    same = {"system_prompt_file": str(path), "options": {"system_prompt": "Use tools.\n", "w": 1}}
    assert RunConfig.model_validate({"agent": same}).agent.options["w"] == 1
    other = {"system_prompt_file": str(path), "options": {"system_prompt": "Other."}}
    assert _refusal({"agent": other}) == (
        f"agent: system_prompt_file {str(path)!r} does not hold the system prompt this config "
        "gives (two prompts given, or the file changed since the run recorded it): give one"
    )
    # a recorded config holds the text the run used, whatever the file says now
    recorded = RunConfig.model_validate({"agent": other}, context=RECORDED)
    assert recorded.agent.options["system_prompt"] == "Other."
    path.unlink()
    gone = RunConfig.model_validate({"agent": same}).agent  # the text is given: file not needed
    assert gone.options["system_prompt"] == "Use tools.\n"
    assert _refusal({"agent": {"system_prompt_file": str(path)}}) == (
        f"agent: system_prompt_file: no such file {str(path)!r}"
    )
    assert _refusal({"agent": {"system_prompt_file": str(path)}}, RECORDED).startswith(
        "agent: system_prompt_file: no such file"
    )  # recorded without its text: the file is needed


def test_the_tool_settings_that_cannot_go_together_are_refused_by_name() -> None:
    assert _refusal({"tools": {"miss_policy": "no-such"}}).startswith(
        "tools.miss_policy: unknown miss policy 'no-such'"
    )
    assert (
        RunConfig.model_validate(
            {"tools": {"miss_policy": "no-such"}}, context=RECORDED
        ).tools.miss_policy
        == "no-such"
    )  # a plugin's policy need not be installed to read a run
    assert _refusal({"tools": {"simulator": "schema-sim"}}) == (
        "tools: --simulator is an option of another miss policy: --miss-policy error takes no "
        "simulator"
    )
    assert _refusal({"tools": {"upstream_url": "http://h/"}}) == (
        "tools: --upstream-url is an option of another miss policy: --miss-policy error takes "
        "no upstream_url"
    )
    upstream = RunConfig(tools={"miss_policy": "upstream", "upstream_url": "http://h/"})
    assert upstream.tools.upstream_url == "http://h/"
    bad_url = {"miss_policy": "upstream", "upstream_url": "ftp://h"}  # checked by the policy
    assert _refusal({"tools": bad_url}) == (
        "tools: miss policy 'upstream': upstream_url: 'ftp://h' is not an http(s) URL (e.g. "
        "https://api.example.com/v1) (--miss-option, --upstream-url)"
    )
    assert _refusal({"tools": {"miss_options": {"nope": 1}}}) == (
        "tools: miss policy 'error' does not take option(s) 'nope'; it takes: none "
        "(--miss-option, --upstream-url)"
    )
    assert _refusal({"tools": {"mcp_server": "ftp://h"}}) == (
        "tools.mcp_server: 'ftp://h' is not an MCP server: expected an http(s):// URL "
        "(streamable HTTP, e.g. http://127.0.0.1:8765/mcp) or 'stdio:COMMAND ARGS'"
    )
    for target in (" https://h/mcp", "http://h/mcp", "stdio:python -m srv"):
        assert RunConfig(tools={"mcp_server": target}).tools.mcp_server == target
    assert _refusal({"tools": {"mcp_server": "http://h/mcp", "url": "http://t"}}) == (
        "tools: tools come from --tools-url or --mcp-server, not both"
    )
    assert _refusal({"tools": {"replay": "runs/x", "url": "http://t"}}) == (
        "tools: a replay's tools come from its recording, not a server"
    )
    assert _refusal({"tools": {"replay": "runs/x", "mcp_server": "http://h/mcp"}}).startswith(
        "tools: a replay's tools"
    )
    assert _refusal({"tools": {"record_into": "s"}}) == (
        "tools: --record-into records what an MCP server answers: add --mcp-server"
    )
    recording = {"mcp_server": "http://h/mcp", "record_into": "s"}
    assert _refusal({"tools": recording, "executor": {"name": "ray"}}) == (
        "--record-into writes one suite from one process: use --executor local"
    )
    assert _refusal({"executor": {"ray_address": "auto"}}) == (
        "executor: --ray-address needs --executor ray"
    )
    assert RunConfig(executor={"name": "ray", "ray_address": "auto"}).executor.ray_address == "auto"


def test_a_cache_path_that_can_never_be_a_file_is_refused_unless_recorded(tmp_path: Path) -> None:
    assert _refusal({"model": {"cache": str(tmp_path)}}) == (
        f"model.cache: {tmp_path} is a folder, not a file"
    )
    recorded = RunConfig.model_validate({"model": {"cache": str(tmp_path)}}, context=RECORDED)
    assert recorded.model.cache == str(tmp_path)


def test_a_flat_update_of_a_field_that_does_not_exist_is_refused_naming_it() -> None:
    with pytest.raises(KeyError) as caught:
        RunConfig().model_copy(update={"run_id": "r", "out": "o", "seed": 2})
    assert caught.value.args[0] == "RunConfig has no field out, run_id: use with_values(paths)"
    assert RunConfig().model_copy(update={"seed": 2}).seed == 2
    config = RunConfig(tasks=["a"])
    shallow = config.model_copy(update={"seed": 2})  # as pydantic's: shared, unless deep
    assert shallow.tasks is config.tasks and shallow.budget is config.budget
    deep = config.model_copy(deep=True)
    assert deep.tasks == ["a"] and deep.tasks is not config.tasks


def test_an_mcp_run_recorded_into_a_suite_reruns_offline_from_that_suite() -> None:
    live = RunConfig(tools={"mcp_server": "http://h/mcp", "record_into": "rec"}, seed=3)
    offline = live.offline()
    assert (offline.suite, offline.tools.mcp_server, offline.tools.record_into) == (
        "rec",
        None,
        None,
    )
    assert offline.seed == 3 and live.tools.mcp_server == "http://h/mcp"
    not_recorded = RunConfig(tools={"mcp_server": "http://h/mcp"})
    assert not_recorded.offline() is not_recorded
    plain = RunConfig()
    assert plain.offline() is plain


def test_faults_are_set_only_when_a_fault_setting_is_given() -> None:
    assert RunConfig(seed=5).run_faults() is None
    assert RunConfig(seed=5, tools={"fault_rate": 0.25}).run_faults() == FaultConfig(
        rate=0.25, kinds=list(FAULT_KINDS), seed=5
    )
    assert RunConfig(seed=5, tools={"fault_seed": 0}).run_faults() == FaultConfig(
        rate=0.0, kinds=list(FAULT_KINDS), seed=0
    )


def test_a_tasks_own_settings_apply_to_it_alone() -> None:
    config = RunConfig(
        agent={"name": "dfsdt", "options": {"width": 3}},
        budget={"max_depth": 6, "max_tool_calls": 4},
        task_settings={"t1": TaskSettings(agent_options={"width": 1}, max_model_calls=9)},
    )
    assert config.strategy("t1").params["width"] == 1
    assert config.strategy("t2").params["width"] == 3
    assert config.strategy().params["width"] == 3
    own = config.budget_for("t1")
    assert (own.max_depth, own.max_tool_calls, own.max_model_calls) == (6, 4, 9)
    assert config.budget_for("t2").max_model_calls == RunConfig().budget.max_model_calls
    assert config.budget_for() == config.budget_for("t2")
