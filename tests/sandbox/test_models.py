"""Model names: aliases, ad hoc endpoints, env overrides, kinds by registry, unknown names."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import ConfigError
from sandbox.models import (
    MODEL_KINDS,
    ModelKind,
    ModelSettings,
    base_url_env_var,
    build_models,
    load_model_entries,
    resolve_model,
)
from sandbox.models.provider import OfflineModels


def test_models_yaml_defines_qwen_and_the_offline_models() -> None:
    entries = load_model_entries()
    assert {"qwen-7b", "gpt-4o-mini", "gpt-4o", "reference", "noisy-reference", "replay"} <= set(
        entries
    )
    qwen = resolve_model("qwen-7b")
    assert qwen.kind == "openai" and qwen.remote
    assert qwen.model == "Qwen/Qwen2.5-7B-Instruct"
    assert qwen.base_url == "http://localhost:8000/v1"
    assert qwen.tool_calls == "native"
    assert qwen.base_url_env == "SANDBOX_QWEN_7B_BASE_URL"


def test_env_overrides_base_url_and_served_model() -> None:
    env = {"SANDBOX_QWEN_7B_BASE_URL": "http://gpu-box:9000/v1/", "SANDBOX_QWEN_7B_MODEL": "q"}
    spec = resolve_model("qwen-7b", env=env)
    assert spec.base_url == "http://gpu-box:9000/v1" and spec.model == "q"
    assert base_url_env_var("gpt-4o-mini") == "SANDBOX_GPT_4O_MINI_BASE_URL"


def test_openai_models_need_their_key_and_never_dump_it() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        resolve_model("gpt-4o-mini", env={})
    spec = resolve_model("gpt-4o-mini", env={"OPENAI_API_KEY": "sk-secret"})
    assert spec.api_key == "sk-secret"
    assert "sk-secret" not in spec.model_dump_json()
    assert "sk-secret" not in str(spec.public())
    assert "sk-secret" not in repr(spec)


def test_ad_hoc_openai_endpoint() -> None:
    spec = resolve_model("openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8123/v1")
    assert spec.kind == "openai"
    assert spec.model == "Qwen/Qwen2.5-7B-Instruct"
    assert spec.base_url == "http://127.0.0.1:8123/v1"
    assert spec.tool_calls == "native"
    text = resolve_model("openai-text:m@http://h/v1", env={"SANDBOX_API_KEY": "k"})
    assert text.tool_calls == "text" and text.api_key == "k"
    with pytest.raises(ConfigError, match="openai:<model>@<base_url>"):
        resolve_model("openai:no-url")


def test_offline_models_and_noise_rate() -> None:
    assert resolve_model("reference").kind == "reference"
    assert resolve_model("noisy-reference").params["rate"] == pytest.approx(0.3)
    assert resolve_model("noisy-reference:0.45").params["rate"] == pytest.approx(0.45)
    with pytest.raises(ConfigError, match="noise rate"):
        resolve_model("noisy-reference:2")
    with pytest.raises(ConfigError, match="replay:<run folder>"):
        resolve_model("replay")
    assert resolve_model("replay:runs/x").params["run"] == "runs/x"


def test_unknown_model_lists_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_model("qwen-700b")
    assert "qwen-7b" in str(err.value) and "noisy-reference" in str(err.value)


def test_models_file_from_env_adds_aliases(tmp_path: Path) -> None:
    extra = tmp_path / "more.yaml"
    extra.write_text(
        "models:\n  local-llama:\n    kind: openai\n    model: llama\n"
        "    base_url: http://127.0.0.1:8080/v1\n    tool_calls: text\n"
    )
    spec = resolve_model("local-llama", env={"SANDBOX_MODELS_FILE": str(extra)})
    assert spec.base_url == "http://127.0.0.1:8080/v1" and spec.tool_calls == "text"
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  x:\n    kind: martian\n")
    with pytest.raises(ConfigError, match="models.x.kind"):
        resolve_model("x", env={"SANDBOX_MODELS_FILE": str(bad)})


def test_a_model_kind_is_one_registry_entry(tmp_path: Path) -> None:
    class Echo(OfflineModels):
        def for_episode(self, task, *, seed, trial):  # type: ignore[no-untyped-def]
            raise AssertionError("not called here")

    def build(spec, settings):  # type: ignore[no-untyped-def]
        return Echo(spec)

    def parse(arg: str, name: str) -> dict[str, str]:
        return {"voice": arg}

    models = tmp_path / "models.yaml"
    models.write_text("models:\n  parrot:\n    kind: echo\n")
    env = {"SANDBOX_MODELS_FILE": str(models)}
    with pytest.raises(ConfigError, match="models.parrot.kind: Value error, unknown model kind"):
        resolve_model("parrot", env=env)
    with MODEL_KINDS.registered("echo", ModelKind("echo", build, parse_arg=parse)):
        spec = resolve_model("parrot:loud", env=env)
        assert spec.kind == "echo" and spec.params == {"voice": "loud"} and not spec.remote
        assert isinstance(build_models(spec, ModelSettings()), Echo)
    assert "echo" not in MODEL_KINDS


def test_fork_is_a_kind_named_directly_with_options() -> None:
    spec = resolve_model(
        "fork", options={"run": "r", "task": "t", "until_step": 1, "then": "reference"}
    )
    assert spec.kind == "fork" and spec.params["then"] == "reference"
    with pytest.raises(ConfigError, match="unknown model 'openai'"):
        resolve_model("openai")  # a kind, but not one usable without an alias
