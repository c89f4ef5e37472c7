"""YAML as the project reads and writes it: libyaml's C loader and dumper when PyYAML was built
with them (several times faster), else PyYAML's pure-Python safe ones. Every YAML file of the
project (suites, ``models.yaml``, recorded MCP suites) goes through here."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["SafeDumper", "SafeLoader", "dump_yaml_text", "load_yaml"]

SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load_yaml(text: str) -> Any:
    """The data of one YAML document (safe tags only); ``yaml.YAMLError`` when it is not one."""
    return yaml.load(text, Loader=SafeLoader)


def dump_yaml_text(data: Any, **options: Any) -> str:
    """``data`` as YAML text as the project writes it (safe tags only, keys in their order,
    Unicode as is, lines of 100 columns); ``options`` as for ``yaml.dump`` override those."""
    chosen = {"sort_keys": False, "allow_unicode": True, "width": 100, **options}
    return yaml.dump(data, Dumper=SafeDumper, **chosen)
