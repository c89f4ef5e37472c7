"""The path language's comparisons are JSON's: numbers by value (1 equals 1.0), but true is not
1 and false is not 0, wherever a value is compared (equals, not_equals, one_of, contains, where),
as records compare when states are hashed."""

from __future__ import annotations

from typing import Any

import pytest

from mock_tools.worlds.paths import check_assertion
from mock_tools.worlds.state import State
from mock_tools.worlds.task import StateAssertion

STATE = State.from_documents(
    {
        "flags": {
            "F-1": {"on": True, "count": 1, "tags": [1, "x"], "meta": {"1": True}},
            "F-2": {"on": 1, "count": 1.0, "tags": [True], "meta": {}},
        }
    }
)


def holds(**fields: Any) -> bool:
    return check_assertion(STATE, StateAssertion.model_validate(fields)).passed


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"path": "flags.F-1.on", "equals": True}, True),
        ({"path": "flags.F-2.on", "equals": True}, False),  # 1 is not true
        ({"path": "flags.F-2.on", "equals": 1}, True),
        ({"path": "flags.F-1.on", "equals": 1}, False),  # true is not 1
        ({"path": "flags.F-2.count", "equals": 1}, True),  # 1.0 is 1
        ({"path": "flags.F-2.on", "not_equals": True}, True),
        ({"path": "flags.F-1.on", "one_of": [1, 2]}, False),
        ({"path": "flags.F-2.on", "one_of": [True, 2]}, False),
        ({"path": "flags.F-1.tags", "contains": 1}, True),
        ({"path": "flags.F-2.tags", "contains": 1}, False),  # [true] holds no 1
        ({"path": "flags.F-1.tags", "contains": True}, False),
        ({"path": "flags.F-1.meta", "contains": "1"}, True),
        ({"path": "flags", "where": {"on": True}, "count": 1}, True),  # only F-1's on is true
        ({"path": "flags", "where": {"count": 1}, "count": 2}, True),
    ],
)
def test_values_compare_as_json_values(fields: dict[str, Any], expected: bool) -> None:
    assert holds(**fields) is expected
