"""What an import read, skipped and wrote: printed as JSON by ``sandbox import``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["ImportSummary", "Skip"]

_MAX_LISTED_SKIPS = 200


class Skip(BaseModel):
    """One entry left out of an import, and why."""

    source: str = Field(description="File (and position) the entry came from.")
    reason: str


class ImportSummary(BaseModel):
    kind: str = Field(description="Which importer ran (toolbench-queries, stb-cache, ...).")
    out: str = Field(description="The suite folder written.")
    read: dict[str, int] = Field(default_factory=dict, description="Counts of what was read.")
    written: dict[str, int] = Field(default_factory=dict, description="Counts of what was written.")
    skipped: list[Skip] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    runs: dict[str, str] = Field(
        default_factory=dict, description="Run folders written, by name (answer imports)."
    )

    def skip(self, source: str, reason: str) -> None:
        self.skipped.append(Skip(source=source, reason=reason))

    def to_json(self) -> dict[str, Any]:
        """The JSON shown to users: skips are counted by reason, the first ones listed."""
        data = self.model_dump(mode="json")
        data["skipped_count"] = len(self.skipped)
        data["skipped_by_reason"] = dict(Counter(_reason_kind(s.reason) for s in self.skipped))
        data["skipped"] = data["skipped"][:_MAX_LISTED_SKIPS]
        return data


def _reason_kind(reason: str) -> str:
    return reason.split(":", 1)[0]
