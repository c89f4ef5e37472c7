"""Equivalent mutants: changes that no test can detect because behaviour does not change.

Each is named by its module, the function it mutates and the exact lines it changes (stripped of
indentation), so an entry goes stale, and the mutant counts as a survivor again, as soon as the
code it describes changes. ``why`` says why the behaviour is the same; ``docs/testing.md`` lists
every entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mutation.equivalents_eval import EVAL_EQUIVALENTS

__all__ = ["EQUIVALENTS", "Equivalent", "matching"]


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    why: str


_SQL_CASE = (
    "SQLite reads keywords, table and column names (and the journal_mode value) in any letter "
    "case: the statement is the same"
)


def _sql_case(module: str, function: str, before: str, sql: str, after: str) -> list[Equivalent]:
    """mutmut's two case mutants of an SQL string literal (all lower case, all upper case) on the
    line ``before + '"' + sql + '"' + after``."""
    line = f'{before}"{sql}"{after}'
    return [
        Equivalent(module, function, (line,), (f'{before}"{case}"{after}',), _SQL_CASE)
        for case in (sql.lower(), sql.upper())
    ]


_TEVAL = "sandbox.eval.steps.teval_metrics"
_ACTIONS = "sandbox.eval.steps.actions"
_FINISH_GOLD = (
    "the Finish question's gold thought and arguments are never read: its reason and understand "
    "are not collected (T-Eval's Finish question has neither), only its name and parse rate"
)
_JSON_DEFAULT = (
    "the benchmark reads a datum without this key (or without its response_format / "
    "prompt_type) as the JSON format, its default: the same format either way"
)
_PAIRS_FIRST = (
    "edges join calls and steps of the same API only, so the graph is a union of complete "
    "bipartite parts and every weight is positive: a maximum-weight matching is maximal, hence "
    "of maximum cardinality in each part, whatever the flag or the positive base weight"
)


def _renamed_key(module: str, function: str, line: str, key: str, why: str) -> list[Equivalent]:
    """mutmut's two mutants of the string literal ``"key"`` in ``line``: ``"XXkeyXX"`` and the
    key in the other letter case."""
    other = key.upper() if key.islower() else key.lower()
    return [
        Equivalent(module, function, (line,), (line.replace(f'"{key}"', f'"{new}"', 1),), why)
        for new in (f"XX{key}XX", other)
    ]


_REPLIES = "sandbox.eval.steps.replies"
_OFFERED_NAME = 'name = str(f.get("function", {}).get("name") or "")'
_OFFERED_KEY = "key = resolver.resolve_function(name) if name and name != FINISH else None"
_NO_FUNCTION = (
    "the resolver knows function names of the form <api>_for_<tool> only: it resolves neither "
    "'', 'XXXX' nor 'Finish', so asking it about them adds no name"
)
_RATIO = "return Measure(value=hits / total, n=total) if total > 0 else Measure(value=None, n=0)"
_SELECT_ZIP = "hits = sum(1 for p, g in zip(chosen, wanted, strict=True) if p == g)"
_FINISH_TRUTH = '"ground_truth": truth or {"thought": "", "name": FINISH, "args": {}},'
_PLAN_DATUM = 'datum = {"prediction": pred, "ground_truth": gold, "meta": {"prompt_type": "json"}}'
_PAIR_EDGE = "edges.append((i, j, 2.0 + sim - 1e-3 * (i - j) ** 2 / scale))"
_PAIRS_CALL = "return max_weight_pairs(edges, maxcardinality=True, memo=memo)"

_OVERLAY = "mock_tools.overlay"
_REPLAY = "sandbox.replay.replay"
_FAULTS = "mock_tools.faults"
_MISS = "mock_tools.miss"
_STORE = "mock_tools.store"
_INDEX = "mock_tools.recording_index"
_DEFAULT_NONE = "the argument left out is the field's default (None): the same StepDiff"


_RUN_STORE = "sandbox.store.run_store"
_TRAJECTORY_FILE = "sandbox.store.trajectory_file"
_CODEC_CASE = "Python looks codec names up in any letter case: the same codec"
_RE_READ = (
    "latest_lines has read every line of the file with the same max_line before and refused any "
    "over it, so the lines read again are all within max_line, hence within the default "
    "(MAX_TRAJECTORY_LINE, the largest limit any caller passes): the same lines, the same parse"
)
_FAST_PATH = (
    "the one-byte check is a shortcut for a file that ends with a newline; when it misses, the "
    "backward scan that follows finds the same last newline (at size - 1): the same end"
)
_SKIP_SHORT = (
    "with fewer than 8 bytes after pos the size field is not all there: either branch ends the "
    "frame past the buffer (None, read more), and a whole empty skippable frame ending the "
    "buffer holds no lines: reading on from it or reading more finds the same frames"
)


def _codec_case(module: str, function: str, line: str, codec: str) -> Equivalent:
    return Equivalent(
        module, function, (line,), (line.replace(f'"{codec}"', f'"{codec.upper()}"'),), _CODEC_CASE
    )


_EXTRA_IGNORED = (
    "Budget ignores fields it does not declare (pydantic's default), so the run's max_run_cost "
    "or a task's agent_options given to it change nothing: the same Budget"
)
_SPLIT_FIRST = "the first part of a split is the same whatever the most splits"
_SPLIT_LAST = "the last part of an rsplit is the same whatever the most splits"
_PLAIN_PLACE = (
    "a plain file's line is read back from its offset and length alone; the size and start of "
    "its place are read for a compressed file's frame only"
)


STORE_EQUIVALENTS: tuple[Equivalent, ...] = (
    _codec_case("sandbox.store.config", "read_prompt_file", 'text = data.decode("utf-8")', "utf-8"),
    _codec_case(
        "sandbox.store.lock",
        "RunLock.owner",
        'text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()',
        "ascii",
    ),
    _codec_case(
        _RUN_STORE,
        "RunStore.append",
        'self.append_lines([trajectory.to_json_line().encode("utf-8")])',
        "utf-8",
    ),
    _codec_case(
        _RUN_STORE,
        "write_new",
        'fh.write(data.encode("utf-8") if isinstance(data, str) else data)',
        "utf-8",
    ),
    Equivalent(
        "sandbox.store.error_text",
        "first_error",
        ("err = e.errors(include_url=False)[0]",),
        ("err = e.errors(include_url=True)[0]",),
        "only the error's loc and msg are read; the url entry it adds is never used",
    ),
    *(
        Equivalent(
            "sandbox.store.config_upgrade",
            "_legacy_path",
            ('head = renamed.split(".", 1)[0]',),
            (after,),
            "every RENAMED value is section.field, one dot: its first part is the same however "
            "the value is split",
        )
        for after in (
            'head = renamed.split(".", 2)[0]',
            'head = renamed.split(".", )[0]',
            'head = renamed.rsplit(".", 1)[0]',
        )
    ),
    Equivalent(
        _RUN_STORE,
        "_check_ran_again",
        ("for lineno, line in enumerate(_whole_lines(file, max_line), 1):",),
        ("for lineno, line in enumerate(_whole_lines(file, ), 1):",),
        _RE_READ,
    ),
    Equivalent(
        _RUN_STORE,
        "_check_ran_again",
        ('if needs_rerun(parse_trajectory_line(line, f"{file}:{lineno}", max_line)):',),
        ('if needs_rerun(parse_trajectory_line(line, f"{file}:{lineno}", )):',),
        _RE_READ,
    ),
    *(
        Equivalent(
            _TRAJECTORY_FILE,
            "_last_newline_end",
            ('if os.pread(fd, 1, size - 1) == b"\\n":',),
            (after,),
            _FAST_PATH,
        )
        for after in (
            'if os.pread(fd, 2, size - 1) == b"\\n":',
            'if os.pread(fd, 1, size + 1) == b"\\n":',
            'if os.pread(fd, 1, size - 1) == b"XX\\nXX":',
        )
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_last_newline_end",
        ("start = max(0, end - 65536)",),
        ("start = max(0, end - 65537)",),
        "the size of each backward read: the scan finds the same last newline with reads of any "
        "size",
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_last_newline_end",
        ('nl = os.pread(fd, end - start, start).rfind(b"\\n")',),
        ('nl = os.pread(fd, end + start, start).rfind(b"\\n")',),
        "the longer read also covers bytes from end on, which earlier reads (or the shortcut) "
        "found to hold no newline: the same last newline",
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_skippable",
        ('magic = int.from_bytes(buf[pos : pos + 4], "little")',),
        ('magic = int.from_bytes(buf[pos : pos + 5], "little")',),
        "a fifth byte adds bits 32-39, which the 32-bit mask of the magic check clears",
    ),
    *(
        Equivalent(
            _TRAJECTORY_FILE, "_skippable", ("if len(buf) - pos < 8:",), (after,), _SKIP_SHORT
        )
        for after in (
            "if len(buf) + pos < 8:",
            "if len(buf) - pos <= 8:",
            "if len(buf) - pos < 9:",
        )
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_skippable",
        ("return end if end <= len(buf) else None",),
        ("return end if end < len(buf) else None",),
        "a skippable frame ending exactly at the end of the buffer holds no lines: taking it now "
        "or after reading more (or at the end of the file) finds the same frames",
    ),
    *(
        Equivalent(
            _RUN_STORE,
            "RunStore.compact",
            (f"for lineno, traj in iter_trajectories(file, self.max_line){end}",),
            (f"for lineno, traj in iter_trajectories(file, ){end}",),
            "compact's latest_lines has read every line with the store's max_line and refused "
            "any over it, so the lines read again are all within it, hence within the default "
            "(MAX_TRAJECTORY_LINE, which a store's limit never exceeds): the same lines",
        )
        for end in (":", "")
    ),
    _codec_case(
        _RUN_STORE,
        "write_lines_atomic",
        'pending.append(waiting.pop(at).encode("utf-8"))',
        "utf-8",
    ),
    Equivalent(
        _RUN_STORE,
        "write_lines_atomic",
        ("if sum(map(len, pending)) >= _FRAME_BYTES or not frames.compressed:",),
        ("if sum(map(len, pending)) >= _FRAME_BYTES and not frames.compressed:",),
        "a plain file's lines are then written in larger pieces (or at the end): the bytes of "
        "the file are the same; a compressed file's frames are cut as before",
    ),
    Equivalent(
        _RUN_STORE,
        "write_lines_atomic",
        ("if sum(map(len, pending)) >= _FRAME_BYTES or not frames.compressed:",),
        ("if sum(map(len, pending)) > _FRAME_BYTES or not frames.compressed:",),
        "frames are of about _FRAME_BYTES: lines summing to exactly 256 KiB end a frame or "
        "join the next; either way the file holds the same lines in the same order",
    ),
    Equivalent(
        _RUN_STORE,
        "RunStore.suite_path",
        ("candidates = [Path(recorded)] if Path(recorded).is_absolute() else bases",),
        ("candidates = [Path(recorded)] if (Path(recorded).is_absolute()) and False else bases",),
        "joining an absolute path to any base gives the absolute path itself: the same "
        "candidates, each tried more than once",
    ),
    Equivalent(
        "sandbox.store.config",
        "BudgetConfig.episode_budget",
        ("return Budget(**self.model_dump(include=set(Budget.model_fields)))",),
        ("return Budget(**self.model_dump(include=None))",),
        _EXTRA_IGNORED,
    ),
    *(
        Equivalent(
            "sandbox.store.config",
            "RunConfig.budget_for",
            ('values.update(own.model_dump(exclude={"agent_options"}, exclude_none=True))',),
            (after,),
            _EXTRA_IGNORED,
        )
        for after in (
            "values.update(own.model_dump(exclude=None, exclude_none=True))",
            "values.update(own.model_dump(exclude_none=True))",
            'values.update(own.model_dump(exclude={"XXagent_optionsXX"}, exclude_none=True))',
            'values.update(own.model_dump(exclude={"AGENT_OPTIONS"}, exclude_none=True))',
        )
    ),
    *(
        Equivalent(
            "sandbox.store.manifest",
            "git_sha",
            before,
            after,
            "a failing git is None either way: check=True raises CalledProcessError, a "
            "SubprocessError the function catches, and check=False is run's default",
        )
        for before, after in (
            (("check=False,", ")"), (")",)),
            (("check=False,",), ("check=True,",)),
        )
    ),
    *(
        Equivalent(
            "sandbox.store.selection",
            "select_tasks",
            ("near = process.extract(unmatched[0][:200], ids, scorer=fuzz.WRatio, limit=5)",),
            (after,),
            "rapidfuzz's process.extract defaults to scorer=WRatio and limit=5: the argument "
            "left out is its default",
        )
        for after in (
            "near = process.extract(unmatched[0][:200], ids, limit=5)",
            "near = process.extract(unmatched[0][:200], ids, scorer=fuzz.WRatio, )",
        )
    ),
    Equivalent(
        "sandbox.store.config",
        "RunConfig.run_faults",
        ("kinds=list(FAULT_KINDS),",),
        (),
        "FaultConfig's kinds default to list(FAULT_KINDS): the argument left out is its default",
    ),
    *(
        Equivalent(
            _RUN_STORE,
            "_write_whole",
            ('raise OSError(errno.ENOSPC, f"short write ({written}/{len(data)} bytes)")',),
            (after,),
            "the error is caught within the store and only its text is shown (its strerror, "
            "else the message itself): the same text, and its errno is read by nobody",
        )
        for after in (
            'raise OSError(None, f"short write ({written}/{len(data)} bytes)")',
            'raise OSError(f"short write ({written}/{len(data)} bytes)")',
        )
    ),
    *(
        Equivalent(_RUN_STORE, "iter_latest", (before,), (after,), _RE_READ)
        for before, after in (
            (
                "for lineno, line in enumerate(_whole_lines(file, max_line), 1):",
                "for lineno, line in enumerate(_whole_lines(file, ), 1):",
            ),
            (
                'yield parse_trajectory_line(line, f"{file}:{lineno}", max_line)',
                'yield parse_trajectory_line(line, f"{file}:{lineno}", )',
            ),
        )
    ),
    Equivalent(
        "sandbox.store.paths",
        "read_regular_file",
        ("data = fh.read(limit + 1)",),
        ("data = fh.read(limit + 2)",),
        "one byte past the limit or two: either read tells a file over the limit from one "
        "within it",
    ),
    _codec_case(
        _RUN_STORE,
        "RunStore._within_limit",
        'return too_large(trajectory, len(line), self.max_line).to_json_line().encode("utf-8")',
        "utf-8",
    ),
    Equivalent(
        _RUN_STORE,
        "RunStore.append_lines",
        ("if len(lines) > 1:",),
        ("if len(lines) >= 1:",),
        "for a group of one line the line-by-line fallback is the write that just failed, made "
        "again on a file cut back to where it was: it fails again (a full disk, a size limit) "
        "and stores nothing, as without it",
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "FrameWriter.__init__",
        (
            "zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True) "
            "if compressed else None",
        ),
        ("zstandard.ZstdCompressor(write_checksum=True) if compressed else None",),
        "ZSTD_LEVEL is 3, zstandard's default level: the argument left out is its default",
    ),
    Equivalent(
        _RUN_STORE,
        "latest_lines",
        ("if len(line) > max_line:",),
        ("if len(line) >= max_line:",),
        "the guard only calls parse_trajectory_line, which refuses a line over max_line and "
        "reads one exactly at it: for such a line nothing is raised and the loop goes on as "
        "without the guard",
    ),
    Equivalent(
        _RUN_STORE,
        "latest_lines",
        ("traj = parse_trajectory_line(line, where, max_line)  # says what is wrong with it",),
        ("traj = parse_trajectory_line(line, where, )  # says what is wrong with it",),
        "the line was checked against max_line a few lines above (a longer one is refused "
        "there), so the default limit, larger, refuses nothing more",
    ),
    *(
        Equivalent(
            _RUN_STORE,
            "latest_lines",
            ("digest = hashlib.blake2b(line, digest_size=16).digest()",),
            (after,),
            "the digests are only compared with each other for equality: two lines get equal "
            "digests of any size exactly when they are equal (a blake2b collision aside)",
        )
        for after in (
            "digest = hashlib.blake2b(line, ).digest()",
            "digest = hashlib.blake2b(line, digest_size=17).digest()",
        )
    ),
    Equivalent(
        _RUN_STORE,
        "_whole_lines",
        ('yield line[:-1] if line.endswith(b"\\n") else line',),
        ('yield line[:-1] if (line.endswith(b"\\n")) or True else line',),
        "every line of a compressed file ends with a newline (a frame must end a line, and a "
        "JSON line holds no bare carriage return to split at): the newline is always cut",
    ),
    _codec_case(_RUN_STORE, "RunStore.open", 'text = file.read_text(encoding="utf-8")', "utf-8"),
    Equivalent(
        _RUN_STORE,
        "RunStore.open",
        ('text = file.read_text(encoding="utf-8")',),
        ("text = file.read_text(encoding=None)",),
        "the locale's encoding, which is UTF-8 wherever the project runs (Linux's C.UTF-8 and "
        "UTF-8 locales, and Python's UTF-8 mode under the C/POSIX locale); only a non-UTF-8 "
        "locale, which no supported setup has, would tell",
    ),
    _codec_case(
        "sandbox.store.lock",
        "RunLock.acquire",
        'owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"',
        "ascii",
    ),
    Equivalent(
        "sandbox.store.lock",
        "RunLock.acquire",
        ("os.ftruncate(fd, 0)",),
        ("os.ftruncate(fd, 1)",),
        "the process id and its newline written next, at offset 0, are two bytes or more: "
        "they cover the one byte kept, and the file is that id line either way",
    ),
    _codec_case(
        _RUN_STORE,
        "write_atomic",
        '_replace(path, lambda fh: fh.writelines(piece.encode("utf-8") for piece in pieces))',
        "utf-8",
    ),
    Equivalent(
        _RUN_STORE,
        "write_atomic",
        ("pieces = [text] if isinstance(text, str) else text",),
        ("pieces = [text] if (isinstance(text, str)) and False else text",),
        "a text is an iterable of its characters: written one encoded character at a time, "
        "the file holds the same bytes",
    ),
    *(
        Equivalent(
            "sandbox.store.config_upgrade",
            "upgrade_flat",
            ('head, name = path.split(".", 1)',),
            (after,),
            "every path moved is section.field (RENAMED's values, or a section and a field "
            "name, which has no dot): one dot, split the same way however it is split",
        )
        for after in (
            'head, name = path.split(".", )',
            'head, name = path.rsplit(".", 1)',
            'head, name = path.split(".", 2)',
        )
    ),
    _codec_case(
        "sandbox.store.manifest",
        "make_run_id",
        '(config.model_dump_json() + when.isoformat()).encode("utf-8")',
        "utf-8",
    ),
    *(
        Equivalent("sandbox.store.manifest", "_model_slug", (before,), (after,), why)
        for before, after, why in (
            (
                'if "@" in name and ":" in name.split("@", 1)[0]:',
                'if "@" in name and ":" in name.split("@", )[0]:',
                _SPLIT_FIRST,
            ),
            (
                'if "@" in name and ":" in name.split("@", 1)[0]:',
                'if "@" in name and ":" in name.split("@", 2)[0]:',
                _SPLIT_FIRST,
            ),
            (
                'name = name.split("@", 1)[0].split(":", 1)[1]',
                'name = name.split("@", )[0].split(":", 1)[1]',
                _SPLIT_FIRST,
            ),
            (
                'name = name.split("@", 1)[0].split(":", 1)[1]',
                'name = name.split("@", 2)[0].split(":", 1)[1]',
                _SPLIT_FIRST,
            ),
            (
                'return _slug(name.rsplit("/", 1)[-1])',
                'return _slug(name.rsplit("/", )[-1])',
                _SPLIT_LAST,
            ),
            (
                'return _slug(name.rsplit("/", 1)[-1])',
                'return _slug(name.rsplit("/", 2)[-1])',
                _SPLIT_LAST,
            ),
        )
    ),
    *(
        Equivalent(
            _TRAJECTORY_FILE,
            "_frame_end",
            ("if len(buf) - pos < 8:",),
            (after,),
            "the smallest zstd frame takes 9 bytes (magic, descriptor, one header byte, a block "
            "header): with 8 a frame's header walk runs out of bytes (None, read more) as the "
            "shortcut does, and other bytes go to the skippable check either way",
        )
        for after in ("if len(buf) - pos <= 8:", "if len(buf) - pos < 9:")
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_frame_end",
        ("if at + 3 > len(buf):",),
        ("if at - 3 > len(buf):",),
        "a block header cut by the end of the buffer is then read in part: its type bits are "
        "in its first byte (never the reserved type in a frame zstd wrote), and the end it "
        "leads to is past the buffer, so the frame is still unfinished (None)",
    ),
    Equivalent(
        _TRAJECTORY_FILE,
        "_frames",
        ("if end > pos and buf[pos : pos + 4] == _MAGIC:",),
        ("if end >= pos and buf[pos : pos + 4] == _MAGIC:",),
        "a frame is never empty: _frame_end returns an end past pos (at least the header), so "
        "end == pos never happens",
    ),
    *(
        Equivalent(
            "sandbox.store.episode_index",
            "EpisodeIndex.refresh",
            ("block.offset + start, stop - start, 0, stop - start, self._lines",),
            (after,),
            _PLAIN_PLACE,
        )
        for after in (
            "block.offset + start, stop + start, 0, stop - start, self._lines",
            "block.offset + start, stop - start, 1, stop - start, self._lines",
        )
    ),
)


EQUIVALENTS: tuple[Equivalent, ...] = (
    *_sql_case(
        _OVERLAY, "OverlayStore.__init__", "self._db.execute(", "PRAGMA journal_mode=WAL", ")"
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.__len__",
        "return int(self._db.execute(",
        "SELECT COUNT(*) FROM responses",
        ").fetchone()[0])",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.get",
        "",
        "SELECT response, provenance FROM responses WHERE tool = ? AND api = ? AND key = ?",
        ",",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.put",
        "",
        "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
        ",",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.recordings",
        "",
        "SELECT tool, api, key, response, provenance FROM responses ORDER BY tool, api, key",
        "",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.fingerprint",
        "",
        "SELECT tool, api, key, response FROM responses ORDER BY tool, api, key",
        "",
    ),
    Equivalent(
        _OVERLAY,
        "OverlayStore.fingerprint",
        ('digest.update("\\0".join(row).encode("utf-8"))',),
        ('digest.update("\\0".join(row).encode("UTF-8"))',),
        "Python looks codec names up in any letter case: the same UTF-8 encoder",
    ),
    Equivalent(
        "mock_tools.history",
        "extend",
        ('digest = hashlib.sha256((history or "").encode("ascii"))',),
        ('digest = hashlib.sha256((history or "").encode("ASCII"))',),
        "Python looks codec names up in any letter case: the same ASCII encoder",
    ),
    Equivalent(
        "mock_tools.history",
        "extend",
        ('digest.update(call.encode("utf-8", "surrogatepass"))',),
        ('digest.update(call.encode("UTF-8", "surrogatepass"))',),
        "Python looks codec names up in any letter case: the same UTF-8 encoder",
    ),
    Equivalent(
        "mock_tools.history",
        "extend",
        ('call = json.dumps([tool, api, key], ensure_ascii=False, separators=(",", ":"))',),
        ('call = json.dumps([tool, api, key], ensure_ascii=False, separators=(",", "XX:XX"))',),
        "the value dumped is a list of three strings: no key, so the key separator is never "
        "written",
    ),
    *(
        Equivalent(_REPLAY, function, (line,), (line.replace(drop, ""),), _DEFAULT_NONE)
        for function, line, drop in (
            (
                "compare_trajectories",
                'verdict.first_diff = StepDiff(node=want.id, field="node", expected=want.kind, '
                "got=None)",
                "got=None",
            ),
            (
                "compare_trajectories",
                'node=extra.id, field="node", expected=None, got=extra.kind',
                "expected=None, ",
            ),
            (
                "EpisodeVerdict.not_replayed",
                "first_diff=StepDiff(node=None, field=field, expected=expected, got=None),",
                "got=None",
            ),
        )
    ),
    *(
        Equivalent(
            _REPLAY,
            "_node_diff",
            ("for k, (a, b) in enumerate(zip(want.calls, have.calls, strict=True)):",),
            (f"for k, (a, b) in enumerate(zip(want.calls, have.calls, {strict})):",),
            "node_difference has returned the differing call count before this loop, so both "
            "lists have the same length and strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            _TEVAL,
            "teval_instruct",
            ('"instruct": mean_measure((f + e) / 2 for f, e in zip(fmt, em, strict=True)),',),
            (f'"instruct": mean_measure((f + e) / 2 for f, e in zip(fmt, em, {strict})),',),
            "fmt and em get one item each per question in the same loop: always the same "
            "length, so strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *_renamed_key(_TEVAL, "_rru", _FINISH_TRUTH, "thought", _FINISH_GOLD),
    *_renamed_key(_TEVAL, "_rru", _FINISH_TRUTH, "args", _FINISH_GOLD),
    Equivalent(
        _TEVAL,
        "_rru",
        (_FINISH_TRUTH,),
        ('"ground_truth": truth or {"thought": "XXXX", "name": FINISH, "args": {}},',),
        _FINISH_GOLD,
    ),
    *_renamed_key(_TEVAL, "_rru", '"meta_data": JSON,', "meta_data", _JSON_DEFAULT),
    *_renamed_key(_TEVAL, "teval_plan", _PLAN_DATUM, "meta", _JSON_DEFAULT),
    *_renamed_key(_TEVAL, "teval_plan", _PLAN_DATUM, "prompt_type", _JSON_DEFAULT),
    Equivalent(
        "sandbox.eval.steps.metric",
        "ScoredMetric.measure",
        ("if len(got) == len(declared) and tuple(got) == declared:",),
        ("if len(got) != len(declared) and tuple(got) == declared:",),
        "a shortcut: without it the general path returns the same dict (no undeclared name, "
        "every declared measure read from got, in declared order)",
    ),
    Equivalent(
        _ACTIONS,
        "match_actions",
        (_PAIR_EDGE,),
        (_PAIR_EDGE.replace("2.0 +", "3.0 +"),),
        _PAIRS_FIRST,
    ),
    *(
        Equivalent(_ACTIONS, "match_actions", (_PAIRS_CALL,), (after,), _PAIRS_FIRST)
        for after in (
            "return max_weight_pairs(edges, memo=memo)",
            "return max_weight_pairs(edges, maxcardinality=False, memo=memo)",
        )
    ),
    Equivalent(
        _REPLIES,
        "offered_names",
        (_OFFERED_NAME,),
        ('name = str(f.get("function", {}).get("name") or "XXXX")',),
        _NO_FUNCTION,
    ),
    *(
        Equivalent(_REPLIES, "offered_names", (_OFFERED_KEY,), (after,), _NO_FUNCTION)
        for after in (
            "key = resolver.resolve_function(name) if (name and name != FINISH) or True else None",
            "key = resolver.resolve_function(name) if name or name != FINISH else None",
        )
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.ultratool_metrics",
            "ultratool_selection",
            (_SELECT_ZIP,),
            (_SELECT_ZIP.replace("strict=True", strict),),
            "select_lists gives one chosen and one wanted tool per reference step: the lists "
            "always have the same length, so strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.similarity",
            "same_value",
            ("kind = type(pred)",),
            (after,),
            "a shortcut: for two strings or two integers == says what comparing their canonical "
            "JSON says, and without it every pair is compared by its canonical JSON",
        )
        for after in ("kind = None", "kind = type(None)")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.arg_scores",
            "ArgumentScores.add",
            (f"sum({score}(v, gold[k]) for v, k in zip(values, keys, strict=True)) / len(keys)",),
            (f"sum({score}(v, gold[k]) for v, k in zip(values, keys, {strict})) / len(keys)",),
            "values is made from keys, one value per key: the same length, so strictness never "
            "applies",
        )
        for score in ("same_value", "value_similarity")
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.matching",
            "_search",
            ('graph.add_edge(("p", i), ("g", j), weight=weight)',),
            (f'graph.add_edge(("p", i), ("{tag}", j), weight=weight)',),
            "the reference steps' node tag only has to differ from the calls' ('p'): the pairs "
            "are read back by testing for 'p' alone",
        )
        for tag in ("XXgXX", "G")
    ),
    Equivalent(
        "sandbox.eval.steps.efficiency",
        "_derived_backtracks",
        (
            "return sum(1 for prev, cur in zip(ordered, ordered[1:], strict=False) "
            "if cur.parent != prev.id)",
        ),
        ("return sum(1 for prev, cur in zip(ordered, ordered[1:], ) if cur.parent != prev.id)",),
        "the argument left out is zip's default (strict=False): the same pairs",
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.measure",
            "ratio",
            (_RATIO,),
            (_RATIO.replace("Measure(value=None, n=0)", after),),
            "the argument left out is the field's default (value None, n 0): the same Measure",
        )
        for after in ("Measure(n=0)", "Measure(value=None, )")
    ),
    *STORE_EQUIVALENTS,
    *(Equivalent(*entry) for entry in EVAL_EQUIVALENTS),
    # -- mock_tools: faults, miss ---------------------------------------------------------------
    Equivalent(
        _FAULTS,
        "decide_fault",
        ("if config is None or config.rate <= 0.0 or not config.kinds:",),
        ("if config is None or config.rate < 0.0 or not config.kinds:",),
        "a draw is never below 0, so a rate of 0 faults no call whether it returns early or not",
    ),
    Equivalent(
        _FAULTS,
        "decide_fault",
        ('separators=(",", ":"),',),
        ('separators=(",", "XX:XX"),',),
        "the material is a JSON array of scalars: no object, so the key separator is never written",
    ),
    Equivalent(
        _FAULTS,
        "decide_fault",
        ('digest = hashlib.sha256(material.encode("utf-8")).digest()',),
        ('digest = hashlib.sha256(material.encode("UTF-8")).digest()',),
        _CODEC_CASE,
    ),
    Equivalent(
        _MISS,
        "run_simulator",
        ("return result if isinstance(result, Response) else Response.model_validate(result)",),
        (
            "return result if (isinstance(result, Response)) and False else "
            "Response.model_validate(result)",
        ),
        "Response.model_validate returns a Response it is given unchanged (pydantic's "
        "revalidate_instances is 'never'): the same object either way",
    ),
    Equivalent(
        _MISS,
        "Upstream.fetch",
        ('content=dumps_canonical(args).encode("utf-8"),',),
        ('content=dumps_canonical(args).encode("UTF-8"),',),
        _CODEC_CASE,
    ),
    Equivalent(
        _MISS,
        "Upstream.fetch",
        ("return UpstreamAnswer(Response(ok=True, body=body, latency_ms=latency), True)",),
        ("return UpstreamAnswer(Response(body=body, latency_ms=latency), True)",),
        "ok=True is Response's default: the same Response",
    ),
    *(
        Equivalent(
            _MISS,
            "Upstream.fetch",
            ('headers={"Content-Type": "application/json"},',),
            (f'headers={{"{name}": "application/json"}},',),
            "HTTP field names are case-insensitive (RFC 9110, 5.1): the same header",
        )
        for name in ("content-type", "CONTENT-TYPE")
    ),
    *(
        Equivalent(
            _MISS,
            "Upstream.url",
            ('t, a = quote(tool, safe=""), quote(api, safe="")',),
            (line,),
            "quote never escapes ASCII letters: letters added to safe change nothing",
        )
        for line in (
            't, a = quote(tool, safe=""), quote(api, safe="XXXX")',
            't, a = quote(tool, safe="XXXX"), quote(api, safe="")',
        )
    ),
    # -- mock_tools: store -------------------------------------------------------------------------
    Equivalent(
        _STORE,
        "RecordingStore.keys",
        ("return [*recorded, *added] if added else recorded",),
        ("return [*recorded, *added] if (added) or True else recorded",),
        "with nothing added, [*recorded] lists the same keys in the same order as recorded",
    ),
    Equivalent(
        _STORE,
        "RecordingWriter._cut_torn_tail",
        ('if size == 0 or os.pread(self._fd, 1, size - 1) == b"\\n":',),
        ('if size == 0 or os.pread(self._fd, 2, size - 1) == b"\\n":',),
        "a read at the last byte returns that one byte however many are asked for",
    ),
    Equivalent(
        _STORE,
        "RecordingWriter._cut_torn_tail",
        ("start = max(0, end - 65536)",),
        ("start = max(0, end - 65537)",),
        "the blocks tile the file backwards from its end whatever their size: the last newline "
        "found is the same; only the number of reads changes",
    ),
    Equivalent(
        _STORE,
        "RecordingWriter._cut_torn_tail",
        ("block = os.pread(self._fd, end - start, start)",),
        ("block = os.pread(self._fd, end + start, start)",),
        "the longer read only adds bytes after end, which an earlier block (or the end of the "
        "file) already showed hold no newline: the last newline found is the same",
    ),
    Equivalent(
        _STORE,
        "RecordingWriter.append",
        ('recording.model_dump(mode="json", exclude_defaults=False),',),
        ('recording.model_dump(mode="json", ),',),
        "exclude_defaults=False is model_dump's default: the same line",
    ),
    Equivalent(
        _STORE,
        "RecordingWriter.append",
        ('data = (line + "\\n").encode("utf-8")',),
        ('data = (line + "\\n").encode("UTF-8")',),
        _CODEC_CASE,
    ),
    *(
        Equivalent(
            _STORE,
            "RecordingWriter.close",
            ("if self._fd >= 0:",),
            (line,),
            "an open writer's descriptor is never 0 (standard input is open in every process "
            "that serves), and a closed one is negative: the same test",
        )
        for line in ("if self._fd > 0:", "if self._fd >= 1:")
    ),
    Equivalent(
        _STORE,
        "RecordingWriter.close",
        ("self._fd = -1",),
        ("self._fd = -2",),
        "any negative descriptor marks the writer closed (close tests >= 0): the same state",
    ),
    # -- mock_tools: recording_index -------------------------------------------------------------
    Equivalent(
        _INDEX,
        "_canonical_text",
        ('return dumps_canonical(canon).encode("utf-8", "surrogatepass"), True',),
        ('return dumps_canonical(canon).encode("UTF-8", "surrogatepass"), True',),
        _CODEC_CASE,
    ),
    *(
        Equivalent(
            _INDEX,
            "_canonical_text",
            (before,),
            (after,),
            "the flag only lets a lookup that found nothing try the key's own text too; a key "
            "whose arguments orjson cannot write cannot be read back and written by orjson "
            "either (_key_text is None), so that lookup tries its own text anyway, and a key "
            "orjson can write never matches a fallback line: the same answers, one search more "
            "or less",
        )
        for before, after in (
            (
                'return dumps_canonical(canon).encode("utf-8", "surrogatepass"), True',
                'return dumps_canonical(canon).encode("utf-8", "surrogatepass"), False',
            ),
            (
                "return orjson.dumps(canon, option=_DUMPS_OPTIONS), False",
                "return orjson.dumps(canon, option=_DUMPS_OPTIONS), True",
            ),
        )
    ),
    Equivalent(
        _INDEX,
        "chosen_occurrence",
        ("if occurrence > last:",),
        ("if occurrence >= last:",),
        "an occurrence equal to the last recorded one is recorded, and was returned above",
    ),
    Equivalent(
        _INDEX,
        "chosen_occurrence",
        ("earlier = [n for n in recorded if n <= occurrence]",),
        ("earlier = [n for n in recorded if n < occurrence]",),
        "the occurrence itself is not recorded (it was returned above): <= and < pick the same",
    ),
    *(
        Equivalent(
            _INDEX,
            "IndexedRecordings.__eq__",
            (
                "return len(self) == len(other) and all(a == b for a, b in zip(self, other, "
                "strict=True))",
            ),
            (
                "return len(self) == len(other) and all(a == b for a, b in zip(self, other, "
                f"{strict}))",
            ),
            "the lengths are compared first, so zip's strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    Equivalent(
        _INDEX,
        "RecordingIndex.__reduce__",
        ('fingerprint = _HEADER.unpack_from(self._data, 0)[3].rstrip(b"\\0").decode()',),
        ('fingerprint = _HEADER.unpack_from(self._data, 0)[3].rstrip(b"XX\\0XX").decode()',),
        "a fingerprint is sha256: and lower-case hex, which never ends in X: the same text",
    ),
    Equivalent(
        _INDEX,
        "RecordingIndex.__reduce__",
        ('fingerprint = _HEADER.unpack_from(self._data, 0)[3].rstrip(b"\\0").decode()',),
        ('fingerprint = _HEADER.unpack_from(self._data, )[3].rstrip(b"\\0").decode()',),
        "offset 0 is unpack_from's default",
    ),
    Equivalent(
        _INDEX,
        "RecordingIndex.keys",
        ("start, end = self._apis.get((tool, api), (0, 0))",),
        ("start, end = self._apis.get((tool, api), (1, 0))",),
        "an API without recordings gets an empty slice either way (start past end)",
    ),
    # -- mock_tools: service -----------------------------------------------------------------------
    Equivalent(
        "mock_tools.service",
        "create_service",
        ('miss_policy: str | MissPolicy = "error",',),
        ('miss_policy: str | MissPolicy = "ERROR",',),
        "policy names are looked up in any letter case (MISS_POLICIES lower-cases them): the "
        "same error policy",
    ),
    # -- sandbox.external: proxy -------------------------------------------------------------------
    _codec_case(
        "sandbox.external.proxy",
        "sse_events",
        'yield b"data: " + json.dumps(c, ensure_ascii=False).encode("utf-8") + b"\\n\\n"',
        "utf-8",
    ),
)


def matching(
    module: str,
    function: str,
    removed: Sequence[str],
    added: Sequence[str],
    equivalents: Sequence[Equivalent] = EQUIVALENTS,
) -> Equivalent | None:
    """The entry describing this change, if one does."""
    for e in equivalents:
        if (e.module, e.function, e.before, e.after) == (
            module,
            function,
            tuple(removed),
            tuple(added),
        ):
            return e
    return None
