"""World tools: the schema a model sees comes from the signature and the docstring."""

from __future__ import annotations

from typing import Literal

import pytest
from typing_extensions import TypedDict

from mock_tools.worlds import Context, World, WorldDefinitionError, read, write
from mock_tools.worlds.state import State
from mock_tools.worlds.tools import tool_def
from mock_tools.worlds.world import WorldEngine


class Shopfront(World):
    name = "shopfront"

    @read
    def search(
        self,
        ctx: Context,
        query: str,
        limit: int = 5,
        sort: Literal["price", "name"] = "name",
        tags: list[str] | None = None,
        in_stock: bool | None = None,
    ) -> list:
        """Search the catalogue.

        A longer paragraph the description keeps.

        Args:
            query: Words to look for,
                across two lines.
            limit: At most this many results.
            sort (str): The order.

        Returns:
            The matching products.
        """
        return []

    @write(name="place_order")
    def order(self, ctx: Context, sku: str, quantity: float) -> dict:
        """Order a product."""
        return {}

    def helper(self) -> None:
        """Not a tool: not marked."""


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    tools = {d.name: d for d in Shopfront.tool_defs()}
    assert list(tools) == ["search", "place_order"]
    search = tools["search"]
    assert search.kind == "read" and tools["place_order"].kind == "write"
    assert search.description == "Search the catalogue. A longer paragraph the description keeps."
    params = search.parameters
    assert params["required"] == ["query"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert props["query"] == {
        "type": "string",
        "description": "Words to look for, across two lines.",
    }
    assert props["limit"] == {
        "type": "integer",
        "default": 5,
        "description": "At most this many results.",
    }
    assert (
        props["sort"]["enum"] == ["price", "name"] and props["sort"]["description"] == "The order."
    )
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["in_stock"] == {"type": "boolean"}
    assert tools["place_order"].parameters["properties"]["quantity"]["type"] == "number"


def test_a_parameter_without_a_type_is_refused_naming_file_and_line() -> None:
    def untyped(self, ctx, sku):  # type: ignore[no-untyped-def]
        """Has no types."""

    with pytest.raises(WorldDefinitionError, match=r"test_world_tools\.py:\d+.*'sku' has no type"):
        tool_def(read(untyped), method=True)


def test_a_tool_without_a_docstring_is_refused() -> None:
    def bare(self, ctx: Context, sku: str) -> None:
        pass

    with pytest.raises(WorldDefinitionError, match="no docstring"):
        tool_def(write(bare), method=True)


def test_a_tool_must_take_the_context() -> None:
    def no_ctx(self) -> None:  # type: ignore[no-untyped-def]
        """Takes nothing."""

    with pytest.raises(WorldDefinitionError, match=r"must take \(self, ctx"):
        tool_def(read(no_ctx), method=True)


def test_plain_functions_listed_in_functions_are_tools_too() -> None:
    @read
    def ping(ctx: Context, text: str) -> str:
        """Answer with the text.

        Args:
            text: Anything.
        """
        return text

    class Pinger(World):
        name = "pinger"
        functions = (ping,)

    (d,) = Pinger.tool_defs()
    assert (d.name, d.method, d.parameters["required"]) == ("ping", False, ["text"])


def test_an_unmarked_function_in_functions_is_refused() -> None:
    def pong(ctx: Context) -> None:
        """Not marked."""

    class Ponger(World):
        functions = (pong,)

    with pytest.raises(WorldDefinitionError, match="not marked"):
        Ponger.tool_defs()


class Phones(World):
    name = "phones"

    @read
    def status(self, ctx: Context) -> str:
        """The line's status, as the agent's systems see it."""
        return "up"


def test_a_user_tool_named_as_an_agent_tool_is_refused_naming_both() -> None:
    # the later definition silently replaced the earlier: the agent lost its tool
    class Clash(Phones):
        @read(user=True, name="status")
        def phone_status(self, ctx: Context) -> str:
            """What the customer's phone shows."""
            return "no signal"

    with pytest.raises(WorldDefinitionError, match="two tools named 'status'") as e:
        Clash.tool_defs()
    assert "the agent's at " in str(e.value) and "the user's here" in str(e.value)
    assert e.value.file is not None and "test_world_tools.py:" in e.value.file


def test_two_tools_of_one_name_in_a_class_or_in_functions_are_refused() -> None:
    class Twice(World):
        @read
        def status(self, ctx: Context) -> str:
            """One."""
            return "1"

        @read(name="status")
        def status_again(self, ctx: Context) -> str:
            """Two."""
            return "2"

    with pytest.raises(WorldDefinitionError, match="the agent's at .* and the agent's here"):
        Twice.tool_defs()

    @read
    def status(ctx: Context) -> str:
        """A plain function named as the method."""
        return "3"

    class Listed(Phones):
        functions = (status,)

    with pytest.raises(WorldDefinitionError, match="two tools named 'status'"):
        Listed.tool_defs()


def test_a_subclass_may_redefine_its_bases_tool_for_the_same_side() -> None:
    class Newer(Phones):
        @read(name="status")
        def status_v2(self, ctx: Context) -> str:
            """The line's status, newer."""
            return "up"

    (d,) = Newer.tool_defs()
    assert (d.name, d.description, d.user) == ("status", "The line's status, newer.", False)


def test_a_world_whose_tools_are_all_the_users_says_so() -> None:
    class PhoneOnly(World):
        name = "phone_only"

        @read(user=True)
        def signal(self, ctx: Context) -> int:
            """The bars the phone shows."""
            return 3

    with pytest.raises(WorldDefinitionError) as e:
        WorldEngine(PhoneOnly, State.empty(), source="phone.py")
    assert str(e.value) == (
        "phone.py: world 'phone_only' has no tools of the agent's (its 1 are the user's)"
    )


class Line(TypedDict):
    title: str
    qty: int


def test_parameters_and_fields_named_title_keep_their_names() -> None:
    class Notes(World):
        name = "notes"

        @write
        def add(
            self, ctx: Context, title: str, lines: list[Line], tags: dict[str, str] | None = None
        ) -> dict:
            """Add a note.

            Args:
                title: Its title.
                lines: Its lines.
                tags: Labels.
            """
            return {}

    (d,) = Notes.tool_defs()
    assert d.parameters["properties"]["title"] == {"type": "string", "description": "Its title."}
    assert d.parameters["required"] == ["title", "lines"]
    line = d.parameters["$defs"]["Line"]
    assert set(line["properties"]) == {"title", "qty"} and "title" not in line  # the name stays


@pytest.mark.parametrize(
    "name", ["get card", "get.card", "app/set_contactless", "x" * 65, "carte_à_puce"]
)
def test_a_tool_name_that_is_no_function_name_is_refused_where_it_is_written(name: str) -> None:
    """OpenAI-compatible APIs refuse a function named with a space or a dot (vLLM and the offline
    models take it): a world's tools must be callable by every model it is offered to."""

    class Named(World):
        @read(name=name)
        def card(self, ctx: Context) -> str:
            """The card."""
            return "K-1"

    with pytest.raises(WorldDefinitionError, match="is a function name the model calls") as e:
        Named.tool_defs()
    assert e.value.file is not None and "test_world_tools.py:" in e.value.file
