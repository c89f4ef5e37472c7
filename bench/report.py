"""The result of one benchmark: rows for the terminal table, a JSON-ready dict of figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Target:
    """A figure an issue sets a goal for (``at_least``/``at_most``; neither: reported only),
    measured against ``anchor`` (empty: an absolute figure) in the same run."""

    label: str
    value: float
    unit: str
    anchor: str
    at_least: float | None = None
    at_most: float | None = None

    @property
    def met(self) -> bool | None:
        if self.at_least is not None:
            return self.value >= self.at_least
        if self.at_most is not None:
            return self.value <= self.at_most
        return None

    @property
    def goal(self) -> str:
        if self.at_least is not None:
            return f">= {self.at_least:g}"
        return f"<= {self.at_most:g}" if self.at_most is not None else "-"

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "value": round(self.value, 4),
            "unit": self.unit,
            "anchor": self.anchor,
            "goal": self.goal,
            "met": self.met,
        }


@dataclass
class BenchResult:
    name: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    load: tuple[float, float] | None = None
    """The 1-minute load average when the benchmark started and when it ended."""

    def as_json(self) -> dict[str, Any]:
        """Everything the result holds, to rebuild it in another process (``from_json``)."""
        return {
            "name": self.name,
            "rows": [list(r) for r in self.rows],
            "figures": self.figures,
            "targets": [
                [t.label, t.value, t.unit, t.anchor, t.at_least, t.at_most] for t in self.targets
            ],
            "load": list(self.load) if self.load is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchResult:
        load = data.get("load")
        return cls(
            name=data["name"],
            rows=[(label, value) for label, value in data["rows"]],
            figures=dict(data["figures"]),
            targets=[Target(*t) for t in data["targets"]],
            load=(load[0], load[1]) if load else None,
        )

    def add(self, label: str, value: float, unit: str, key: str) -> None:
        self.rows.append((label, f"{value:,.2f} {unit}".strip()))
        self.figures[key] = round(value, 4)

    def target(
        self,
        label: str,
        value: float,
        unit: str,
        anchor: str,
        *,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> None:
        self.targets.append(Target(label, value, unit, anchor, at_least, at_most))


def format_table(results: list[BenchResult]) -> str:
    width = max((len(label) for r in results for label, _ in r.rows), default=10)
    lines: list[str] = []
    for r in results:
        lines.append(f"== {r.name}")
        lines.extend(f"  {label:<{width}}  {value:>22}" for label, value in r.rows)
    return "\n".join(lines)


def format_targets(results: list[BenchResult]) -> str:
    """One line per target: its figure against its anchor, the goal, whether it is met, and the
    load average while its benchmark ran (the machine is shared)."""
    rows = sorted(((r, t) for r in results for t in r.targets), key=lambda rt: rt[1].label[:2])
    if not rows:
        return ""
    width = max(len(t.label) for _, t in rows)
    lines = ["== targets (each measured in one run against its anchor)"]
    for r, t in rows:
        anchor = f"vs {t.anchor}" if t.anchor else ""
        met = {True: "met", False: "NOT met", None: ""}[t.met]
        load = f"load {r.load[0]:.1f}-{r.load[1]:.1f}" if r.load else ""
        lines.append(
            f"  {t.label:<{width}}  {t.value:>10,.3f} {t.unit:<2} {anchor:<22} "
            f"{t.goal:<7} {met:<7} {load}"
        )
    return "\n".join(lines)
