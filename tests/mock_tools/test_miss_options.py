"""Miss policies have options: declared by the policy's class, reached from the serve flags.

What it protects: ``nearest``'s threshold is its option, set by ``--miss-option`` or by
``--nearest-threshold`` (a spelling of it); an option a policy does not take, or a bad value, is
a one-line exit 2 naming what the policy takes; whether a policy's answers go to the overlay is
its ``records``, whatever its name; and a policy of the user's own module serves by its path.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from mock_tools import PROVENANCE_HEADER, MockToolsError, in_process_client
from mock_tools.__main__ import main as mock_tools_main
from mock_tools.http_app import http_app
from mock_tools.miss import MISS_POLICIES, NearestPolicy, build_miss_policy, policy_kind
from mock_tools.overlay import OVERLAY_FILE
from mock_tools.serving import add_serve_arguments, build_service, serve_options


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(list(argv))


class Keeper(NearestPolicy):
    """A policy of the test's own, which asks for its answers to be kept."""

    name = "keeper"
    records = True


def test_the_threshold_is_nearest_s_option() -> None:
    default = build_miss_policy("nearest")
    assert isinstance(default, NearestPolicy) and default.threshold == 90
    assert build_miss_policy("nearest", {"threshold": 55}).threshold == 55
    with pytest.raises(MockToolsError) as info:
        build_miss_policy("nearest", {"colour": 1})
    assert str(info.value) == (
        "miss policy 'nearest' does not take option(s) 'colour'; it takes: threshold"
    )
    with pytest.raises(MockToolsError, match="threshold: Input should be less than or equal"):
        build_miss_policy("nearest", {"threshold": 101})


async def test_a_lower_threshold_reaches_further(suite: Any) -> None:
    async def provenance(threshold: str) -> str:
        options = serve_options(_serve_args("x", "--miss-policy", "nearest", *threshold.split()))
        policy = build_miss_policy("nearest", options.miss_options)
        from mock_tools.service import create_service

        app = http_app(create_service(suite, miss_policy=policy))
        async with in_process_client(app) as client:
            r = await client.post("/tools/Weather Now/current", json={"city": "Parisian Plaza"})
        return r.headers[PROVENANCE_HEADER]

    assert await provenance("") == "miss"
    assert await provenance("--nearest-threshold 40") == "nearest"
    assert await provenance("--miss-option threshold=40") == "nearest"
    # --miss-option wins over the flag that spells the same option
    assert await provenance("--nearest-threshold 40 --miss-option threshold=99") == "miss"


def test_a_flag_spelling_an_option_the_policy_lacks_is_refused() -> None:
    """Hardening round two, item 7: ``--nearest-threshold`` without ``--miss-policy nearest`` was
    left out silently; it is a one-line error naming the policy and the options it takes."""
    with pytest.raises(MockToolsError, match="--nearest-threshold is an option of another miss"):
        serve_options(_serve_args("x", "--nearest-threshold", "50"))


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--miss-option", "colour=red"], "miss policy 'error' does not take option(s) 'colour'"),
        (["--miss-policy", "nearest", "--miss-option", "x"], "--miss-option expects KEY=VALUE"),
        (["--miss-policy", "guess"], "unknown miss policy 'guess'; known: error, nearest"),
        (["--miss-policy", "no_such.module:Policy"], "cannot import miss policy no_such.module"),
    ],
)
def test_bad_miss_options_are_one_line_exit_2(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    assert mock_tools_main(["serve", str(suite_dir), *flags]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_the_overlay_follows_the_policy_s_records_not_its_name(suite_dir: Path) -> None:
    with MISS_POLICIES.registered("keeper", policy_kind(Keeper)):
        kept = build_service(serve_options(_serve_args(str(suite_dir), "--miss-policy", "keeper")))
    assert kept.overlay is not None and kept.overlay.path == suite_dir / OVERLAY_FILE
    kept.overlay.close()
    plain = build_service(serve_options(_serve_args(str(suite_dir), "--miss-policy", "nearest")))
    assert plain.overlay is None


class Forgetful(NearestPolicy):
    """Does not say whether its answers are kept: an error, not a guess."""

    name = "forgetful"
    records = None


def test_a_policy_must_say_whether_it_records() -> None:
    with pytest.raises(MockToolsError, match="miss policy 'forgetful' has no records attribute"):
        build_miss_policy(f"{__name__}:Forgetful")


def test_a_policy_of_the_user_s_module_serves_by_its_path(suite_dir: Path) -> None:
    path = f"{__name__}:Keeper"
    service = build_service(serve_options(_serve_args(str(suite_dir), "--miss-policy", path)))
    assert service.miss_policy.name == "keeper" and service.overlay is not None
    service.overlay.close()
    assert "keeper" not in MISS_POLICIES
