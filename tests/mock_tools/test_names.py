"""ToolBench name standardisation and the resolver from any spelling."""

import pytest

from mock_tools.names import NameResolver, api_identifier, function_name, standardize


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Weather Now", "weather_now"),
        ("  --Get  User's Data!!  ", "get_user_s_data"),
        ("2-Day Outlook", "get_2_day_outlook"),
        ("a__b", "a_b"),
        ("ÜberMaps", "bermaps"),
        ("天气 API", "天气_api"),
        ("", ""),
    ],
)
def test_standardize(raw, expected):
    assert standardize(raw) == expected


def test_reserved_api_names_get_is_prefix():
    assert api_identifier("from") == "is_from"
    assert api_identifier("ID") == "is_id"
    assert api_identifier("lookup") == "lookup"


def test_function_name_keeps_last_64_characters():
    assert function_name("Weather Now", "current") == "current_for_weather_now"
    long = function_name("t" * 40, "a" * 40)
    assert len(long) == 64
    assert long.endswith("_for_" + "t" * 40)


def test_resolver_accepts_every_spelling():
    r = NameResolver([("Weather Now", "current"), ("Weather Now", "2-Day Outlook"), ("shop", "id")])
    assert r.resolve("Weather Now", "current") == ("Weather Now", "current")
    assert r.resolve("weather_now", "CURRENT") == ("Weather Now", "current")
    assert r.resolve("weather_now", "get_2_day_outlook") == ("Weather Now", "2-Day Outlook")
    assert r.resolve("", "current_for_weather_now") == ("Weather Now", "current")
    assert r.resolve("shop", "is_id") == ("shop", "id")
    assert r.resolve_function("is_id_for_shop") == ("shop", "id")
    assert r.resolve("shop", "current_for_weather_now") is None  # function of another tool
    assert r.resolve("nope", "current") is None


def test_resolver_resolves_truncated_function_names():
    tool, api = "A Very Long Tool Name For Testing Purposes", "An Equally Long Api Name Here"
    r = NameResolver([(tool, api)])
    assert r.resolve_function(function_name(tool, api)) == (tool, api)


def test_exact_names_win_over_standardised_collisions():
    r = NameResolver([("t", "Get User"), ("t", "get_user")])
    assert r.resolve("t", "get_user") == ("t", "get_user")
    assert r.resolve("t", "Get User") == ("t", "Get User")


def test_suggestions_are_close_names():
    r = NameResolver([("weather", "current"), ("weather", "forecast"), ("maps", "route")])
    assert r.suggest("weathr", None)[0] == "weather"
    assert r.suggest("weather", "forcast")[0] == "weather/forecast"
    assert r.suggest("wether", "curent")[0] == "weather/current"


def test_split_function_name_inverts_function_name() -> None:
    from mock_tools import split_function_name

    for tool, api in [("weather", "current"), ("x", "get_for_y"), ("t", "is_id")]:
        assert split_function_name(function_name(tool, api)) == (tool, api)
    # Ambiguous names split at their last ``_for_``; any split found round-trips.
    assert split_function_name("a_for_b_for_c") == ("c", "a_for_b")
    assert split_function_name("read_file") is None
    assert split_function_name("Current_for_Weather") is None  # not ToolBench's spelling
    assert split_function_name("_for_x") is None


def test_unique_function_names_are_explicit_or_toolbench_and_never_collide() -> None:
    from mock_tools import unique_function_names

    names = unique_function_names(
        [
            ("Weather Now", "current", None),
            ("weather now", "Current", None),  # same function name: suffixed
            ("files", "read", "read_file"),
            ("Weather Now", "current", None),  # the same API twice: once
        ]
    )
    assert names == {
        "current_for_weather_now": ("Weather Now", "current"),
        "current_for_weather_now_2": ("weather now", "Current"),
        "read_file": ("files", "read"),
    }
    long = unique_function_names([("t" * 70, "a", None), ("t" * 71, "a", None)])
    assert all(len(n) <= 64 for n in long) and len(long) == 2


def test_explicit_function_names_resolve() -> None:
    from mock_tools.models import ApiSpec

    apis = {("srv", "Get-Weather"): ApiSpec(name="Get-Weather", function="Get-Weather")}
    r = NameResolver.for_apis(apis)
    assert r.resolve_function("Get-Weather") == ("srv", "Get-Weather")
    assert r.resolve("", "Get-Weather") == ("srv", "Get-Weather")
