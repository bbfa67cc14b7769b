"""pytest's configuration for the whole suite; the shared helpers are in support.py.

The tests are grouped by feature: generator/ (derivatives.yaml to generated/ and
the yamlgrad-gen command), autograd/ (the engine and its semantics), ops/ (one file
per op family against torch, and every YAML entry's gradients and torch parity),
nn/, optim/, api/ (the public surface, serialization, viz, the README, examples
and benchmarks), fuzz/ (the two differential fuzzers) and architecture/ (the
runtime's layers). `pythonpath = ["tests"]` in pyproject.toml makes
`import support` work from every folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _generator_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """yamlgrad-gen's unit cache (tools/formatting.py) lives in a folder of the
    run's own, inherited by the yamlgrad-gen processes tests start: the suite
    never reads or writes the user's ~/.cache, and starts from an empty one."""
    saved = os.environ.get("YAMLGRAD_GEN_CACHE")
    os.environ["YAMLGRAD_GEN_CACHE"] = str(tmp_path_factory.mktemp("gen-cache"))
    yield
    if saved is None:
        os.environ.pop("YAMLGRAD_GEN_CACHE", None)
    else:
        os.environ["YAMLGRAD_GEN_CACHE"] = saved
