"""What a model's tokens cost: ``Price`` (USD per million tokens) and where it came from.

A ``models.yaml`` entry may say ``price: {input, output, cached_input}``; a hosted model without
one is looked up in the maintained ``genai-prices`` table by its name and endpoint; an endpoint on
this machine or the local network (vLLM, llama.cpp...) costs nothing unless priced. The source is
recorded with the model, so every report can say where its cost came from. Imports
``genai_prices`` only when a hosted model has no price of its own.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MILLION", "Price", "is_local_endpoint", "lookup_price"]

MILLION = 1_000_000


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="USD per 1M prompt tokens.")
    output: float = Field(ge=0, description="USD per 1M completion tokens.")
    cached_input: float | None = Field(
        default=None, ge=0, description="USD per 1M prompt tokens read from the provider's cache."
    )


def is_local_endpoint(base_url: str | None) -> bool:
    """An endpoint on this machine or a private network (it bills nobody)."""
    host = urlsplit(base_url or "").hostname or ""
    if host in ("", "localhost") or host.endswith((".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a bare host name such as gpu-box
    return address.is_private or address.is_loopback or address.is_link_local


def lookup_price(model: str, base_url: str | None) -> tuple[Price | None, str]:
    """The price of a hosted model from ``genai-prices``, and a note of where it came from."""
    if is_local_endpoint(base_url):
        return None, "local endpoint: cost 0 unless priced in models.yaml"
    try:
        # Imported here: the price table costs start-up time that offline runs never need.
        from genai_prices import Usage, calc_price
        from genai_prices import __version__ as version
    except ImportError:  # pragma: no cover - a core dependency
        return None, "no price: genai-prices is not installed"

    def per_million(**tokens: int) -> float:
        return float(calc_price(Usage(**tokens), model, provider_api_url=base_url).total_price)

    try:
        price = Price(
            input=per_million(input_tokens=MILLION),
            output=per_million(output_tokens=MILLION),
            cached_input=per_million(input_tokens=MILLION, cache_read_tokens=MILLION),
        )
    except LookupError:
        return None, f"no price: {model!r} at {base_url} is not in genai-prices {version}"
    return price, f"genai-prices {version}"
