"""Writing a run's scores: ``scores.json``, ``report.md``, PNG plots, and a terminal table.

``scores.json`` is stable: keys sorted, floats rounded to 6 decimals, no timestamps or paths, so
evaluating the same run twice gives the same bytes. ``report.md`` adds each episode's final
answer (read through ``sandbox.store.EpisodeIndex``) and the command that opens the run in the
viewer. May import ``eval`` modules and ``sandbox.store``.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sandbox.eval.evaluate import RunScores
from sandbox.eval.headline import rate_cell
from sandbox.eval.judge import judge_text
from sandbox.eval.pass_rate import PassSummary
from sandbox.eval.state_checks import StateChecks
from sandbox.eval.stats import Interval
from sandbox.eval.step_report import StepReport
from sandbox.eval.steps.metric import DEFAULT_STEP_PROTOCOL
from sandbox.store import EpisodeIndex, EpisodeKey
from sandbox.store.gc_pause import paused_gc
from sandbox.store.run_store import write_atomic

SCORES_FILE = "scores.json"
REPORT_FILE = "report.md"
PASS_PLOT = "pass_rate.png"
STEP_PLOT = "step_profile.png"
COST_PLOT = "cost_vs_pass.png"
DECIMALS = 6


def stable(value: Any, decimals: int = DECIMALS) -> Any:
    """Round every float (and turn -0.0 into 0.0) throughout a JSON-like value."""
    if isinstance(value, float):
        return round(value, decimals) + 0.0
    if isinstance(value, dict):
        return {str(k): stable(v, decimals) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [stable(v, decimals) for v in value]
    return value


def scores_json(scores: RunScores) -> str:
    return "".join(scores_json_parts(scores))


_LABELS_MARK = "\x00labels\x00"


def scores_json_parts(scores: RunScores) -> Iterator[str]:
    """``scores.json``'s text in pieces, ``_LABEL_BATCH`` labels at a time: the same text as one
    ``json.dumps(stable(scores.model_dump(...)), sort_keys=True, indent=2)``, without the whole
    run's labels ever being one dict or one string (a run of 100,000 episodes has as many)."""
    data = stable(scores.model_dump(mode="json", by_alias=True, exclude={"labels"}))
    data["labels"] = _LABELS_MARK
    before, after = _json(data).split(json.dumps(_LABELS_MARK), 1)
    yield before
    labels = scores.labels
    if not labels:
        yield "[]"
    for start in range(0, len(labels), _LABEL_BATCH):
        batch = [
            stable(lb.model_dump(mode="json", by_alias=True))
            for lb in labels[start : start + _LABEL_BATCH]
        ]
        items = _json(batch)[2:-2]  # "[\n" and "\n]" off: the items, two spaces in
        yield ("[\n  " if start == 0 else ",\n  ") + items.replace("\n", "\n  ")
    if labels:
        yield "\n  ]"
    yield after + "\n"


_LABEL_BATCH = 1000
"""Labels dumped with one ``json.dumps`` (with ``indent``, each call makes cyclic garbage)."""


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)


def pct(iv: Interval) -> str:
    """A rate with its interval (``n/a`` over no episode: ``headline.rate_cell``)."""
    return rate_cell(iv)


def rate_text(p: PassSummary) -> str:
    """The pass rate with its interval, and with judge samples their standard deviation."""
    text = rate_cell(p.pass_rate)
    if p.sample_rates and p.pass_rate.n:
        text += f" ± {100 * (p.sample_std or 0.0):.1f} (std over {len(p.sample_rates)} samples)"
    return text


def step_profile(scores: RunScores) -> list[tuple[str, Interval]]:
    """The step-level dimensions that apply, in report order, each with its interval."""
    if scores.step_scores is None:
        return []
    return [(d, iv) for d, iv in scores.step_scores.intervals.items() if iv.n > 0]


def _cost_axis(scores: RunScores) -> tuple[float, str]:
    u = scores.usage
    per = max(1, u.episodes)
    if u.cost > 0:
        return u.cost / per, "cost per episode"
    return u.tokens / per, "tokens per episode"


def _cell(text: str, limit: int) -> str:
    """Text for one markdown table cell: one line, pipes escaped, at most ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return flat.replace("|", "\\|")


def render_markdown(
    scores: RunScores,
    *,
    answers: Mapping[EpisodeKey, str | None] | None = None,
    view_command: str | None = None,
) -> str:
    """The report for people, one section after the other. ``answers`` adds each episode's
    final answer to the episode table; ``view_command`` is the command line that opens this run
    in the viewer."""
    return "".join(markdown_parts(scores, answers=answers, view_command=view_command))


def markdown_parts(
    scores: RunScores,
    *,
    answers: Mapping[EpisodeKey, str | None] | None = None,
    view_command: str | None = None,
) -> Iterator[str]:
    """``render_markdown``'s text line by line (the episode table's rows made one at a time)."""
    out = _header(scores, view_command)
    out += _pass_rate_section(scores)
    out += _trials_section(scores)
    out += state_checks_section(scores.state_checks)
    for name, report in scores.step_protocol_reports().items():
        out += _steps_section(report, name)
    out += _usage_section(scores)
    out += _simulator_section(scores)
    out += _infra_section(scores)
    out += _users_section(scores)
    out += _judge_section(scores)
    out += _reference_section(scores)
    out += _notes_section(scores)
    for line in itertools.chain(out, _episodes_section(scores, answers or {})):
        yield line + "\n"


def _header(scores: RunScores, view_command: str | None) -> list[str]:
    out = [
        f"# Run {scores.run_id}",
        "",
        f"Suite **{scores.suite.get('name', '')}** (fingerprint "
        f"`{scores.suite.get('fingerprint', '')[:12]}`), agent **{scores.agent}**, "
        f"model **{scores.model}**; {scores.tasks} tasks x {scores.trials} trial(s) = "
        f"{scores.episodes} episodes. Protocol **{scores.protocol}**"
        + (f", judge **{judge_text(scores.judge)}**" if scores.judge is not None else "")
        + ". Intervals are 95% seeded bootstrap intervals over tasks.",
    ]
    if view_command:
        out += ["", f"Browse its episodes, trees and scores: `{view_command}`"]
    return out


def _pass_rate_section(scores: RunScores) -> list[str]:
    p = scores.pass_rate
    out = [
        "",
        "## Pass rate",
        "",
        "| scope | n | solved | unsure | unsolved | pass rate [95% CI] |",
        "|---|---:|---:|---:|---:|---|",
        f"| all | {p.n} | {p.solved} | {p.unsure} | {p.unsolved} | {pct(p.pass_rate)} |",
    ]
    for g, r in p.groups.items():
        out.append(f"| {g} | {r.n} | {r.solved} | {r.unsure} | {r.unsolved} | {pct(r.pass_rate)} |")
    out += ["", f"Scores: {scores.scoring_rule()}. Missing episodes: {p.missing}."]
    if p.sample_rates:
        rates = ", ".join(f"{100 * r:.1f}%" for r in p.sample_rates)
        out.append(
            f"Judge samples: {len(p.sample_rates)}; pass rate per sample {rates}; mean "
            f"{100 * p.pass_rate.value:.1f}%, std {100 * (p.sample_std or 0.0):.1f}."
        )
    for reason, episodes in p.excluded.items():
        out.append(f"Left out of the pass rate ({reason}): {len(episodes)}: {', '.join(episodes)}.")
    out.append("By status: " + ", ".join(f"{k} {v}" for k, v in p.by_status.items()) + ".")
    out.append("Decided by: " + ", ".join(f"{k} {v}" for k, v in p.by_method.items()) + ".")
    return out


def _trials_section(scores: RunScores) -> list[str]:
    if not scores.pass_at_k:
        return []
    out = ["", "## Trials", "", "| k | pass@k | pass^k |", "|---:|---:|---:|"]
    for k, v in scores.pass_at_k.items():
        out.append(f"| {k} | {v:.3f} | {scores.pass_hat_k[k]:.3f} |")
    return out


def state_checks_section(checks: StateChecks | None) -> list[str]:
    """``report.md``'s state checks: each check's rate and its pass@k / pass^k with intervals,
    then the checks of each task that failed in some episode."""
    if checks is None:
        return []
    ks = sorted({k for r in checks.rates() for k in r.pass_at_k}, key=int)
    heads = ["check", "tasks", "episodes", "passed", "rate [95% CI]"]
    heads += [f"pass@{k} [95% CI]" for k in ks] + [f"pass^{k} [95% CI]" for k in ks]
    out = [
        "",
        "## State checks",
        "",
        "Each check of the world's final state (and of the calls carried out) over the episodes "
        "that count, whatever decided their label; `all`: every state check of the episode held.",
        "",
        "| " + " | ".join(heads) + " |",
        "|---|" + "---:|" * (len(heads) - 1),
    ]
    for r in checks.rates():
        cells = [r.check, str(r.tasks), str(r.episodes), str(r.passed), pct(r.rate)]
        cells += [pct(r.pass_at_k[k]) if k in r.pass_at_k else "-" for k in ks]
        cells += [pct(r.pass_hat_k[k]) if k in r.pass_hat_k else "-" for k in ks]
        out.append("| " + " | ".join(cells) + " |")
    if checks.unjudged:
        out.append(f"\nEpisodes without a state check (no verdict): {checks.unjudged}.")
    if checks.diverged:
        out.append(
            f"\nReplays that left the recorded states (every check fails): "
            f"{', '.join(checks.diverged)}."
        )
    failing = [t for t in checks.tasks if t.passed < t.episodes]
    if failing:
        out += [
            "",
            "Checks of a task that failed in some episode:",
            "",
            "| task | check | what | passed |",
            "|---|---|---|---:|",
        ]
        out += [
            f"| {t.task_id} | {t.check} | {_cell(t.description, 160)} | {t.passed}/{t.episodes} |"
            for t in failing
        ]
    return out


def _steps_section(report: StepReport, protocol: str) -> list[str]:
    """A step protocol's measures (the default protocol's section keeps its old title), then
    the metrics added to it, as ``METRIC.MEASURE``."""
    title = "## Step-level scores"
    if protocol != DEFAULT_STEP_PROTOCOL:
        title += f" (step protocol {protocol})"
    out = ["", title, "", "| dimension | mean [95% CI] | episodes | units |", "|---|---|---:|---:|"]
    rows = step_rows(report)
    for d, iv, units in rows:
        if iv.n > 0:
            out.append(f"| {d} | {pct(iv)} | {iv.n} | {units} |")
    skipped = [d for d, iv, _ in rows if iv.n == 0]
    if skipped:
        out.append(f"\nNot applicable in this run: {', '.join(skipped)}.")
    if report.reason_similarity:
        out.append(f"Thought similarity (reason): {report.reason_similarity}.")
    tree = report.summary.get("tree", {})
    if tree:
        out.append("Tree (mean per episode): " + _kv(tree) + ".")
    return out


def step_rows(report: StepReport) -> list[tuple[str, Interval, Any]]:
    """``(name, interval, units)`` of every measure of a step report, in report order: the
    protocol's own, then each added metric's as ``METRIC.MEASURE``."""
    dims = report.summary.get("dimensions", {})
    rows = [(d, iv, dims.get(d, {}).get("units", "")) for d, iv in report.intervals.items()]
    for metric, added in report.metrics.items():
        for d, iv in added.intervals.items():
            units = added.dimensions[d].units if d in added.dimensions else ""
            rows.append((f"{metric}.{d}", iv, units))
    return rows


def _usage_section(scores: RunScores) -> list[str]:
    u = scores.usage
    return [
        "",
        "## Usage (agents)",
        "",
        f"Model calls {u.model_calls}, tool calls {u.tool_calls}, tokens {u.tokens} "
        f"(prompt {u.prompt_tokens}, completion {u.completion_tokens}), cost {u.cost:.4f} USD"
        + (f" (price: {scores.price_source})" if scores.price_source else "")
        + f", wall {u.wall_seconds:.1f}s over {u.episodes} trajectories.",
    ]


def _simulator_section(scores: RunScores) -> list[str]:
    if not scores.simulator:
        return []
    s = scores.simulator
    return [
        "",
        "## Tool simulator (reported apart)",
        "",
        f"Model {s.get('model')}: {s.get('simulations', 0)} simulated responses, "
        f"{s.get('calls', 0)} calls ({s.get('invalid_replies', 0)} replies not JSON, "
        f"{s.get('retries', 0)} retried, {s.get('failures', 0)} failed), tokens "
        f"{s.get('prompt_tokens', 0) + s.get('completion_tokens', 0)}, "
        f"cost {s.get('cost', 0.0):.4f} USD.",
    ]


def _infra_section(scores: RunScores) -> list[str]:
    i = scores.infra
    if not (i.retries or i.errors):
        return []
    return [
        "",
        "## Infrastructure (not the agent's)",
        "",
        f"Model calls retried: {i.retries}. Episodes ended by an infrastructure error: "
        f"{i.errors}"
        + (f" ({', '.join(i.episodes)}; `--resume` runs them again)." if i.errors else "."),
    ]


def _users_section(scores: RunScores) -> list[str]:
    """The episodes a failure of their conversation's user ended, by kind: not the agent's."""
    failed = [lb for lb in scores.labels if lb.excluded == "user"]
    if not failed:
        return []
    kinds = Counter(_failure_kind(lb.reason) for lb in failed)
    return [
        "",
        "## Users (not the agent's)",
        "",
        f"Episodes ended by a failure of their conversation's user: "
        f"{scores.pass_rate.user_failures} ("
        + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        + "): "
        + ", ".join(lb.episode for lb in failed)
        + ". Left out of the pass rate, like infrastructure errors; failures are never "
        "recorded, so a later run asks the user again.",
    ]


def _failure_kind(reason: str) -> str:
    """A user failure's kind from its label's reason (``user failure: empty: ...``)."""
    parts = reason.removeprefix("user failure:").split(":", 1)
    return parts[0].strip() or "failure"


def _judge_section(scores: RunScores) -> list[str]:
    if scores.judge is None:
        return []
    j = scores.judge
    settings = scores.judge_settings
    how = (
        f" Samples {settings.samples}, rounds {settings.rounds}, temperature "
        f"{settings.temperature}, order {settings.order}."
        if settings is not None
        else ""
    )
    return [
        "",
        "## Judge (reported apart)",
        "",
        f"Model {judge_text(j)}: {j.calls} calls, {j.cache_hits} cache hits, {j.invalid_replies} "
        f"invalid replies, {j.errors} errors, tokens {j.prompt_tokens + j.completion_tokens}, "
        f"cost {j.cost:.4f}.{how}",
    ]


def _reference_section(scores: RunScores) -> list[str]:
    if scores.reference is None:
        return []
    w, t = scores.reference.win, scores.reference.paired
    return [
        "",
        f"## Win rate against {scores.reference.reference_run}",
        "",
        f"Wins {w.wins}, losses {w.losses}, ties {w.ties} over {w.n} episodes. "
        f"Win rate (ties {'half' if w.tie_value == 0.5 else 'as 0'}): {pct(w.win_rate)}; "
        f"tie rate {100 * w.tie_rate:.1f}%; ToolEval-compatible (ties 0): "
        f"{pct(w.tooleval_win_rate)}.",
        "Decided by rule: " + _kv(w.by_rule) + ".",
        *([f"Judge errors (not counted): {', '.join(w.judge_errors)}."] if w.judge_errors else []),
        f"Paired McNemar (solved): only this run {t.only_a}, only the reference "
        f"{t.only_b}, both {t.both}, neither {t.neither}; exact p = {t.p_value:.4g}.",
    ]


def _notes_section(scores: RunScores) -> list[str]:
    if not scores.notes:
        return []
    return ["", "## Notes", ""] + [f"- {n}" for n in scores.notes]


def _episodes_section(scores: RunScores, answers: Mapping[EpisodeKey, str | None]) -> Iterator[str]:
    yield from ("", "## Episodes", "")
    yield "| task | trial | status | label | method | reason | final answer |"
    yield "|---|---:|---|---|---|---|---|"
    for lb in scores.labels:
        answer = answers.get((lb.task_id, lb.trial))
        shown = "" if answer is None else _cell(answer, 240) or "(empty)"
        yield (
            f"| {lb.task_id} | {lb.trial} | {lb.status} | {lb.label} | {lb.method} | "
            f"{_cell(lb.reason, 240)} | {shown} |"
        )


def _kv(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())


PLOTS = (PASS_PLOT, STEP_PLOT, COST_PLOT)
"""Every PNG ``write_report`` may draw into a run folder."""


def remove_plots(folder: Path, names: tuple[str, ...] = PLOTS) -> None:
    """Remove plots of earlier scores: a plot never shows numbers other than ``scores.json``'s,
    so new scores drawn without plots (``--no-plots``), or without one of them, leave none."""
    for name in names:
        (folder / name).unlink(missing_ok=True)


def write_report(run_dir: str | Path, scores: RunScores, *, plots: bool = True) -> list[Path]:
    """Write scores.json, report.md and (unless ``plots=False``) the PNGs; return the paths.
    Plots of earlier scores that these do not draw again are removed (``remove_plots``). A bulk
    job: the cyclic collector is paused for it (``sandbox.store.gc_pause``)."""
    with paused_gc():
        return _write_report(Path(run_dir), scores, plots)


def _write_report(run_dir: Path, scores: RunScores, plots: bool) -> list[Path]:
    folder = Path(run_dir)
    written = [folder / SCORES_FILE, folder / REPORT_FILE]
    remove_plots(folder)  # first: no plot of earlier scores outlives them, whatever happens next
    write_atomic(written[0], scores_json_parts(scores))
    answers = scores.answers()
    if answers is None:
        answers = {d.key: d.final_answer for d in EpisodeIndex.of(folder).digests}
    markdown = markdown_parts(scores, answers=answers, view_command=f"sandbox view {folder}")
    write_atomic(written[1], markdown)
    if not plots:
        return written
    from sandbox.eval.plots import plot_cost_vs_pass, plot_rates, plot_step_profile  # matplotlib

    p = scores.pass_rate
    entries = [("all", p.pass_rate)] + [(g, r.pass_rate) for g, r in p.groups.items()]
    title = f"{scores.agent} / {scores.model}"
    written.append(plot_rates(entries, folder / PASS_PLOT, title=f"Pass rate: {title}"))
    profile = step_profile(scores)
    if profile:
        written.append(plot_step_profile(profile, folder / STEP_PLOT, title=f"Steps: {title}"))
    cost, label = _cost_axis(scores)
    written.append(
        plot_cost_vs_pass(
            [(title, cost, p.pass_rate)], folder / COST_PLOT, xlabel=label, title="Cost vs pass"
        )
    )
    return written


def print_table(scores: RunScores, console: Console) -> None:
    """The terminal summary: pass rate per group, step profile, win rate."""
    console.print(_pass_table(scores))
    for reason, episodes in scores.pass_rate.excluded.items():
        console.print(f"left out of the pass rate ({reason}): {len(episodes)}")
    if scores.state_checks is not None:
        console.print(state_checks_table(scores.state_checks))
    for name, report in scores.step_protocol_reports().items():
        steps = _steps_table(report, name)
        if steps.row_count:
            console.print(steps)
    if scores.reference is not None:
        w = scores.reference.win
        console.print(
            f"vs {scores.reference.reference_run}: {w.wins} wins / {w.losses} losses / "
            f"{w.ties} ties; win rate {pct(w.win_rate)}, tie rate {100 * w.tie_rate:.1f}%, "
            f"ToolEval {pct(w.tooleval_win_rate)}; "
            f"McNemar p = {scores.reference.paired.p_value:.4g}"
        )
    if scores.judge is not None:
        j = scores.judge
        console.print(
            f"judge {judge_text(j)}: {j.calls} calls, {j.cache_hits} cached, {j.invalid_replies} "
            f"invalid, {j.prompt_tokens + j.completion_tokens} tokens, cost {j.cost:.4f}"
        )


def _pass_table(scores: RunScores) -> Table:
    judged = f", judge {judge_text(scores.judge)}" if scores.judge is not None else ""
    table = Table(
        title=f"{scores.run_id}: {scores.agent} / {scores.model} "
        f"(protocol {scores.protocol}{judged})"
    )
    for col in ("scope", "n", "solved", "unsure", "unsolved", "pass rate [95% CI]"):
        table.add_column(col, justify="left" if col == "scope" else "right")
    p = scores.pass_rate
    rows = [("all", p)] + list(p.groups.items())
    for name, r in rows:
        table.add_row(
            name, str(r.n), str(r.solved), str(r.unsure), str(r.unsolved), pct(r.pass_rate)
        )
    if p.sample_rates:
        table.caption = "judge samples: " + rate_text(p)
    return table


def state_checks_table(checks: StateChecks) -> Table:
    """The terminal's state checks: each check's rate, and pass@k / pass^k at the largest k
    when there are trials."""
    ks = sorted({k for r in checks.rates() for k in r.pass_at_k}, key=int)
    last = ks[-1:]
    table = Table(title="State checks (the world's final state and the calls carried out)")
    heads = ["check", "episodes", "passed", "rate [95% CI]"]
    heads += [f"pass@{k}" for k in last] + [f"pass^{k}" for k in last]
    for col in heads:
        table.add_column(col, justify="left" if col == "check" else "right", no_wrap=True)
    for r in checks.rates():
        cells = [r.check, str(r.episodes), str(r.passed), pct(r.rate)]
        cells += [_value(r.pass_at_k.get(k)) for k in last]
        cells += [_value(r.pass_hat_k.get(k)) for k in last]
        table.add_row(*cells)
    caption = [f"{checks.unjudged} episode(s) without a state check"] if checks.unjudged else []
    if last:
        caption.append("report.md gives every k with its interval")
    table.caption = "; ".join(caption) or None
    return table


def _value(iv: Interval | None) -> str:
    return "-" if iv is None else f"{100 * iv.value:.1f}%"


def _steps_table(report: StepReport, protocol: str) -> Table:
    """The measures of a step report that apply (none: an empty table, not printed)."""
    title = "Step-level scores"
    if protocol != DEFAULT_STEP_PROTOCOL:
        title += f" (step protocol {protocol})"
    table = Table(title=title)
    table.add_column("dimension")
    table.add_column("mean [95% CI]", justify="right")
    table.add_column("n", justify="right")
    for d, iv, _ in step_rows(report):
        if iv.n > 0:
            table.add_row(d, pct(iv), str(iv.n))
    if report.reason_similarity:
        table.caption = f"reason scored by: {report.reason_similarity}"
    return table
