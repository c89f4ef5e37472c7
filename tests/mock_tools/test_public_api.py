"""The public surface of mock_tools is pinned: changes to it are deliberate."""

import subprocess
import sys

import mock_tools

EXPECTED = {
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
}


def test_all_is_pinned_and_importable():
    assert set(mock_tools.__all__) == EXPECTED
    assert len(mock_tools.__all__) == len(EXPECTED)
    for name in mock_tools.__all__:
        assert getattr(mock_tools, name) is not None


def test_mock_tools_stands_alone():
    code = "import sys, mock_tools; print(sorted(m for m in sys.modules if m.split('.')[0] in "
    code += "('sandbox', 'agents')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
