"""``constant``: every call without a recording gets the same successful body.

``--miss-option body='{"ok": 1}'`` sets it (any JSON value; text that is not JSON is a string).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mock_tools.miss import Miss, MissAnswer, MissPolicyOptions
from mock_tools.models import Response


class ConstantOptions(MissPolicyOptions):
    body: Any = Field(default=None, description="The body every miss gets (a JSON value).")


class ConstantPolicy:
    name = "constant"
    records = False
    """Its answers are not kept: the next identical call is a miss again (and gets the same)."""
    Options = ConstantOptions

    def __init__(self, options: ConstantOptions) -> None:
        self.options = options

    async def answer(self, miss: Miss) -> MissAnswer | None:
        return MissAnswer(Response(ok=True, body=self.options.body), provenance="constant")

    async def aclose(self) -> None:
        return None
