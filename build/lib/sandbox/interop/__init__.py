"""Reading and writing other benchmarks' formats: ToolBench, StableToolBench, ToolEyes.

Importers write suite folders (and, for answer trees, a run folder) that ``load_suite`` and the
run store read; each returns an ``ImportSummary`` of what it read, skipped and wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.interop.export_toolbench import export_run, read_converted, to_converted
    from sandbox.interop.observations import parse_observation, render_observation, same_observation
    from sandbox.interop.stb_cache import import_stb_cache
    from sandbox.interop.summary import ImportSummary
    from sandbox.interop.toolbench_answers import import_answers
    from sandbox.interop.toolbench_queries import import_queries
    from sandbox.interop.tooleyes import import_tooleyes

_EXPORTS: dict[str, str] = {
    "ImportSummary": "sandbox.interop.summary",
    "export_run": "sandbox.interop.export_toolbench",
    "import_answers": "sandbox.interop.toolbench_answers",
    "import_queries": "sandbox.interop.toolbench_queries",
    "import_stb_cache": "sandbox.interop.stb_cache",
    "import_tooleyes": "sandbox.interop.tooleyes",
    "parse_observation": "sandbox.interop.observations",
    "read_converted": "sandbox.interop.export_toolbench",
    "render_observation": "sandbox.interop.observations",
    "same_observation": "sandbox.interop.observations",
    "to_converted": "sandbox.interop.export_toolbench",
}

__all__ = [
    "ImportSummary",
    "export_run",
    "import_answers",
    "import_queries",
    "import_stb_cache",
    "import_tooleyes",
    "parse_observation",
    "read_converted",
    "render_observation",
    "same_observation",
    "to_converted",
]

lazy_package(__name__, _EXPORTS)
