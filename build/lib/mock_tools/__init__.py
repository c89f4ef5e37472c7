"""mock_tools: deterministic mock tool servers for tool-using agents (standalone library).

Load a suite, build an app, call it in process or serve it with uvicorn::

    from mock_tools import create_app, in_process_client, load_suite

    app = create_app(load_suite("scenarios/default"))
    async with in_process_client(app) as client:
        r = await client.post("/tools/weather/current", json={"city": "Oslo"})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mock_tools.lazy import lazy_package

if TYPE_CHECKING:
    from mock_tools.canonical import canonical_args, canonical_key
    from mock_tools.client import IN_PROCESS_BASE_URL, in_process_client
    from mock_tools.errors import MockToolsError, SuiteError
    from mock_tools.faults import FaultPlan, decide_fault
    from mock_tools.headers import (
        FAULTS_HEADER,
        OCCURRENCE_HEADER,
        PROVENANCE_HEADER,
        RECORDINGS_HEADER,
        SCENARIO_HEADER,
        SESSION_HEADER,
    )
    from mock_tools.http_app import create_app, header_value, http_app
    from mock_tools.miss import (
        MISS_POLICIES,
        ErrorPolicy,
        Miss,
        MissAnswer,
        MissPolicy,
        NearestPolicy,
        SimulatePolicy,
        Simulator,
        Upstream,
        UpstreamPolicy,
        build_miss_policy,
        register_miss_policy,
    )
    from mock_tools.models import (
        ApiSpec,
        Check,
        FaultConfig,
        FaultKind,
        Recording,
        Response,
        Task,
        ToolSpec,
    )
    from mock_tools.names import (
        NameResolver,
        function_name,
        split_function_name,
        standardize,
        unique_function_names,
    )
    from mock_tools.service import CallContext, MockToolService, Outcome, Rejected, create_service
    from mock_tools.store import OccurrenceCounter, RecordingStore, RecordingWriter
    from mock_tools.suite import Suite, load_suite
    from mock_tools.validate import SuiteReport, validate_suite

_EXPORTS: dict[str, str] = {
    "ApiSpec": "mock_tools.models",
    "CallContext": "mock_tools.service",
    "Check": "mock_tools.models",
    "ErrorPolicy": "mock_tools.miss",
    "FAULTS_HEADER": "mock_tools.headers",
    "FaultConfig": "mock_tools.models",
    "FaultKind": "mock_tools.models",
    "FaultPlan": "mock_tools.faults",
    "IN_PROCESS_BASE_URL": "mock_tools.client",
    "MISS_POLICIES": "mock_tools.miss",
    "Miss": "mock_tools.miss",
    "MissAnswer": "mock_tools.miss",
    "MissPolicy": "mock_tools.miss",
    "MockToolService": "mock_tools.service",
    "MockToolsError": "mock_tools.errors",
    "NameResolver": "mock_tools.names",
    "NearestPolicy": "mock_tools.miss",
    "OCCURRENCE_HEADER": "mock_tools.headers",
    "OccurrenceCounter": "mock_tools.store",
    "Outcome": "mock_tools.service",
    "PROVENANCE_HEADER": "mock_tools.headers",
    "RECORDINGS_HEADER": "mock_tools.headers",
    "Recording": "mock_tools.models",
    "RecordingStore": "mock_tools.store",
    "RecordingWriter": "mock_tools.store",
    "Rejected": "mock_tools.service",
    "Response": "mock_tools.models",
    "SCENARIO_HEADER": "mock_tools.headers",
    "SESSION_HEADER": "mock_tools.headers",
    "SimulatePolicy": "mock_tools.miss",
    "Simulator": "mock_tools.miss",
    "Suite": "mock_tools.suite",
    "SuiteError": "mock_tools.errors",
    "SuiteReport": "mock_tools.validate",
    "Task": "mock_tools.models",
    "ToolSpec": "mock_tools.models",
    "Upstream": "mock_tools.miss",
    "UpstreamPolicy": "mock_tools.miss",
    "build_miss_policy": "mock_tools.miss",
    "canonical_args": "mock_tools.canonical",
    "canonical_key": "mock_tools.canonical",
    "create_app": "mock_tools.http_app",
    "create_service": "mock_tools.service",
    "decide_fault": "mock_tools.faults",
    "function_name": "mock_tools.names",
    "header_value": "mock_tools.http_app",
    "http_app": "mock_tools.http_app",
    "in_process_client": "mock_tools.client",
    "load_suite": "mock_tools.suite",
    "register_miss_policy": "mock_tools.miss",
    "split_function_name": "mock_tools.names",
    "standardize": "mock_tools.names",
    "unique_function_names": "mock_tools.names",
    "validate_suite": "mock_tools.validate",
}

__all__ = [
    "FAULTS_HEADER",
    "IN_PROCESS_BASE_URL",
    "MISS_POLICIES",
    "OCCURRENCE_HEADER",
    "PROVENANCE_HEADER",
    "RECORDINGS_HEADER",
    "SCENARIO_HEADER",
    "SESSION_HEADER",
    "ApiSpec",
    "CallContext",
    "Check",
    "ErrorPolicy",
    "FaultConfig",
    "FaultKind",
    "FaultPlan",
    "Miss",
    "MissAnswer",
    "MissPolicy",
    "MockToolService",
    "MockToolsError",
    "NameResolver",
    "NearestPolicy",
    "OccurrenceCounter",
    "Outcome",
    "Recording",
    "RecordingStore",
    "RecordingWriter",
    "Rejected",
    "Response",
    "SimulatePolicy",
    "Simulator",
    "Suite",
    "SuiteError",
    "SuiteReport",
    "Task",
    "ToolSpec",
    "Upstream",
    "UpstreamPolicy",
    "build_miss_policy",
    "canonical_args",
    "canonical_key",
    "create_app",
    "create_service",
    "decide_fault",
    "function_name",
    "header_value",
    "http_app",
    "in_process_client",
    "load_suite",
    "register_miss_policy",
    "split_function_name",
    "standardize",
    "unique_function_names",
    "validate_suite",
]

lazy_package(__name__, _EXPORTS)
