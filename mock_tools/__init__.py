"""mock_tools: deterministic mock tool servers for tool-using agents (standalone library).

Load a suite, build an app, call it in process or serve it with uvicorn::

    from mock_tools import create_app, in_process_client, load_suite

    app = create_app(load_suite("scenarios/default"))
    async with in_process_client(app) as client:
        r = await client.post("/tools/weather/current", json={"city": "Oslo"})
"""

from mock_tools.canonical import canonical_args, canonical_key
from mock_tools.client import IN_PROCESS_BASE_URL, in_process_client
from mock_tools.errors import MockToolsError, SuiteError
from mock_tools.faults import FaultPlan, decide_fault
from mock_tools.http_app import (
    FAULTS_HEADER,
    OCCURRENCE_HEADER,
    PROVENANCE_HEADER,
    RECORDINGS_HEADER,
    SCENARIO_HEADER,
    SESSION_HEADER,
    create_app,
    header_value,
    http_app,
)
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
