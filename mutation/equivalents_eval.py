"""Equivalent mutants of the win-rate, statistics and ToolEval modules (``sandbox.eval``) and of
the fixture installer (``sandbox.replay.fixtures``): each changes no behaviour any test could
observe, for the reason given. Plain tuples ``(module,
function, lines before, lines after, why)``: ``mutation.equivalents`` makes them entries and
lists them with the others."""

from __future__ import annotations

__all__ = ["EVAL_EQUIVALENTS", "Entry"]

Entry = tuple[str, str, tuple[str, ...], tuple[str, ...], str]


def Equivalent(  # noqa: N802 - reads like the entries of mutation.equivalents
    module: str, function: str, before: tuple[str, ...], after: tuple[str, ...], why: str
) -> Entry:
    return (module, function, before, after, why)


_STATS = "sandbox.eval.stats"
_RULES_JUDGE = "sandbox.eval.tooleval.rules_judge"


def _swaps(module: str, function: str, line: str, news: tuple[str, ...], why: str) -> list[Entry]:
    """One entry per mutant of ``line`` (the lines mutmut wrote instead)."""
    return [Equivalent(module, function, (line,), (new,), why) for new in news]


def _zip_strict(module: str, function: str, line: str, why: str) -> list[Entry]:
    """mutmut's two mutants of a ``strict=True`` zip: ``strict`` left out, and ``False``."""
    return _swaps(
        module,
        function,
        line,
        (line.replace("strict=True", ""), line.replace("strict=True", "strict=False")),
        why,
    )


_MCNEMAR = (
    "mcnemar_exact has refused samples of different lengths before, so strictness never applies"
)
_NEVER_RETRIED = (
    "the in-process endpoint never answers with an HTTP error, and an exception raised in it "
    "reaches the caller as it is, which no retry policy retries: the policy is never consulted"
)
_MODELS_LINE = 'return http.Response(200, json={"object": "list", "data": [{"id": RULES_JUDGE}]})'
_CALL_LINE = "RULES_JUDGE, BASE_URL, name=RULES_JUDGE, retry=no_retries, http_client=client"
_PROMPT_LINE = 'prompt = str(messages[-1].get("content") or "") if messages else ""'

_REPORT_LINE = 'report.read_text(encoding="utf-8").replace(str(fresh), str(dest)), encoding="utf-8"'

EVAL_EQUIVALENTS: tuple[Entry, ...] = (
    *_swaps(
        "sandbox.replay.fixtures",
        "_install",
        _REPORT_LINE,
        (
            _REPORT_LINE.replace('read_text(encoding="utf-8")', 'read_text(encoding="UTF-8")'),
            _REPORT_LINE.replace(', encoding="utf-8"', ', encoding="UTF-8"'),
        ),
        "Python looks codec names up in any letter case: the same UTF-8 codec",
    ),
    *_swaps(
        "sandbox.eval.win_rate",
        "_by",
        "cand_wins = a > b if higher else a < b",
        (
            "cand_wins = a >= b if higher else a < b",
            "cand_wins = a > b if higher else a <= b",
        ),
        "_by has returned None when a == b, so > and >= (< and <=) agree on every pair that "
        "reaches this line",
    ),
    *_zip_strict(
        _STATS,
        "_cluster_sums",
        "for v, c in zip(values, clusters, strict=True):",
        "bootstrap_ci has refused values and cluster ids of different lengths before, so "
        "strictness never applies",
    ),
    *_zip_strict(
        _STATS,
        "mcnemar_exact",
        "only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)",
        _MCNEMAR,
    ),
    *_zip_strict(
        _STATS,
        "mcnemar_exact",
        "only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)",
        _MCNEMAR,
    ),
    *_zip_strict(
        _STATS,
        "mcnemar_exact",
        "both = sum(1 for x, y in zip(a, b, strict=True) if x and y)",
        _MCNEMAR,
    ),
    Equivalent(
        _STATS,
        "binomial_two_sided",
        ("if n == 0:",),
        ("if n == 1:",),
        "the formula gives 1.0 for n = 0 (twice 1, capped) and for n = 1 (twice 1/2) alike, so "
        "which of the two the shortcut takes changes no result",
    ),
    Equivalent(
        _STATS,
        "pass_at_k",
        ("if n - c < k:",),
        ("if n + c < k:",),
        "math.comb(n - c, k) is 0 when k > n - c, so the formula gives exactly 1.0 where the "
        "shortcut does",
    ),
    Equivalent(
        "sandbox.eval.tooleval.answer",
        "converted_answer",
        ("if not traj.chosen_path and traj.nodes:",),
        ("if not traj.chosen_path or traj.nodes:",),
        "with a chosen path, episode_path is that path (the copy has the same chosen_path); "
        "without nodes the path is empty either way",
    ),
    *_swaps(
        "sandbox.eval.tooleval.answer",
        "final_step_is_finish",
        """return bool(tools) and "'name': 'Finish'" in str(tools[-1].get("message", ""))""",
        tuple(
            f"""return bool(tools) and "'name': 'Finish'" in str(tools[-1].get("message", {d}))"""
            for d in ("None", "", '"XXXX"')
        ),
        "a tool node without a message holds no Finish call whatever stands in for it: '', "
        "'None' and 'XXXX' all lack \"'name': 'Finish'\"",
    ),
    *(
        Equivalent(
            "sandbox.eval.tooleval.preference",
            "shown_first",
            (line,),
            (line.replace("< 0.5", "<= 0.5"),),
            "random() returns exactly 0.5 for no key a test can find (one draw in 2**53), so "
            "< and <= pick the same side",
        )
        for line in (
            'coin = seeded_rng(seed, "order", task_id, trial, round_).random() < 0.5',
            'coin = (seeded_rng(seed, "order", task_id, trial).random() < 0.5) '
            "!= (round_ % 2 == 1)",
        )
    ),
    Equivalent(
        "sandbox.eval.tooleval.protocol_toolbench",
        "ToolbenchProtocol.label",
        ("samples = settings.samples or self.defaults.samples or 1",),
        ("samples = settings.samples or self.defaults.samples or 2",),
        "the protocol's defaults give 4 samples, so the last fallback is never reached",
    ),
    Equivalent(
        "sandbox.eval.tooleval.protocol_toolbench",
        "ToolbenchProtocol.prefer",
        ("rounds=settings.rounds or self.defaults.rounds or 1,",),
        ("rounds=settings.rounds or self.defaults.rounds or 2,",),
        "the protocol's defaults give 2 rounds, so the last fallback is never reached",
    ),
    *_swaps(
        "sandbox.eval.tooleval.rules",
        "toolbench_round",
        "if len(solved) < 2:",
        ("if len(solved) <= 2:", "if len(solved) < 3:"),
        "a round compares two answers: when both are Solved neither is Unsure, so the Unsure "
        "test finds none and the round asks select_better_answer as before",
    ),
    Equivalent(
        _RULES_JUDGE,
        "_http_library",
        ('return importlib.import_module(base.__module__.partition(".")[0])',),
        ('return importlib.import_module(base.__module__.partition("XX.XX")[0])',),
        "the client class's own module (httpx._client) holds the same AsyncClient, "
        "MockTransport and Response objects as the package",
    ),
    Equivalent(
        _RULES_JUDGE,
        "_tool_counts",
        ('error = _json(str(message.get("response") or ""), {}).get("error")',),
        ('error = _json(str(message.get("response") or "XXXX"), {}).get("error")',),
        "neither '' nor 'XXXX' is a JSON object: both read as a response without an error",
    ),
    *(
        Equivalent(
            _RULES_JUDGE,
            "rules_judge",
            (line,),
            (line.replace("(200,", "(201,"),),
            "the openai client takes any 2xx answer as a success and nothing else sees the status",
        )
        for line in (_MODELS_LINE, "return http.Response(200, json=endpoint.complete(body))")
    ),
    *_swaps(
        _RULES_JUDGE,
        "rules_judge",
        _MODELS_LINE,
        tuple(
            _MODELS_LINE.replace(old, new)
            for old, new in (
                ('"object"', '"XXobjectXX"'),
                ('"object"', '"OBJECT"'),
                ('"list"', '"XXlistXX"'),
                ('"list"', '"LIST"'),
            )
        ),
        "the openai client's model list reads data and ignores the object field",
    ),
    *_swaps(
        _RULES_JUDGE,
        "rules_judge",
        "no_retries = RetryPolicy(max_retries=0)",
        ("no_retries = None", "no_retries = RetryPolicy(max_retries=1)"),
        _NEVER_RETRIED,
    ),
    *_swaps(
        _RULES_JUDGE,
        "rules_judge",
        _CALL_LINE,
        (
            _CALL_LINE.replace("retry=no_retries", "retry=None"),
            _CALL_LINE.replace("retry=no_retries, ", ""),
        ),
        _NEVER_RETRIED,
    ),
    *_swaps(
        _RULES_JUDGE,
        "rules_judge",
        _CALL_LINE,
        (
            _CALL_LINE.replace("name=RULES_JUDGE", "name=None"),
            _CALL_LINE.replace("name=RULES_JUDGE, ", ""),
        ),
        "an OpenAICompatModel without a name is named after its model, which is RULES_JUDGE",
    ),
    Equivalent(
        _RULES_JUDGE,
        "rules_judge",
        ('if request.method == "GET" and request.url.path.endswith("/models"):',),
        ('if request.method == "GET" or request.url.path.endswith("/models"):',),
        "the openai client sends GET only to /models and POST only to /chat/completions, so "
        "either test picks out the same requests",
    ),
    *_swaps(
        _RULES_JUDGE,
        "RulesJudgeEndpoint.complete",
        _PROMPT_LINE,
        (
            'prompt = str(messages[-1].get("content") or "XXXX") if messages else ""',
            'prompt = str(messages[-1].get("content") or "") if messages else "XXXX"',
        ),
        "no ToolEval prompt is '' or 'XXXX': a request without messages or content is refused "
        "the same way",
    ),
)
