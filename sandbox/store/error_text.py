"""``first_error``: a pydantic validation error as the one line a user is shown.

pydantic's own text spans several lines and links to its web pages; a command prints one line,
naming where (the field's dotted path) and what. May import nothing of the project.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["first_error"]


def first_error(e: ValidationError, limit: int = 200) -> str:
    """The first error of a pydantic validation as one short line: where, then what."""
    err = e.errors(include_url=False)[0]
    where = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    text = f"{where}: {msg}" if where else msg
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
