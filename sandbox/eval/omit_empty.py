"""``OmitEmpty``: a pydantic model whose listed fields are left out of its dumps while empty.

A field added to a stable file (``scores.json``, ``comparison.json``) that way leaves the file of
every run that does not use it byte for byte as it was. Imports nothing of the project.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

__all__ = ["OmitEmpty"]


class OmitEmpty(BaseModel):
    """Dumps without the fields of ``omit_when_empty`` that are empty (``{}``, ``[]``, None)."""

    omit_when_empty: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.omit_when_empty:
                if not getattr(self, name):
                    data.pop(name, None)
        return data
