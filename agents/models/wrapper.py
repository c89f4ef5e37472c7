"""``ModelWrapper``: the base of a model that wraps another one and changes its turns.

It hands on what the wrapped client has besides ``complete``: its request parameters (what a
trajectory records of the model), its endpoint probe and its ``aclose``. The text adapter
(``agents.models.text_react``) and the harness's unescaping wrapper are such models. Imports
``agents.model`` only.
"""

from __future__ import annotations

from typing import Any

from agents.model import Model


class ModelWrapper:
    """Holds ``inner`` and hands on its ``params``, ``probe`` and ``aclose``."""

    def __init__(self, inner: Model, *, name: str | None = None) -> None:
        self.inner = inner
        self.name = name or inner.name

    @property
    def params(self) -> dict[str, Any]:
        """The wrapped client's request parameters (what a trajectory records of the model)."""
        params = getattr(self.inner, "params", None)
        return dict(params) if isinstance(params, dict) else {}

    async def probe(self) -> Any:
        """The wrapped client's endpoint probe (None when it has none)."""
        probe = getattr(self.inner, "probe", None)
        return await probe() if probe is not None else None

    async def aclose(self) -> None:
        """Close the wrapped client, if it holds one."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
