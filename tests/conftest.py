"""pytest's configuration for the whole suite; the shared helpers are in support.py.

The tests are grouped by feature: generator/ (derivatives.yaml to generated/),
autograd/ (the engine and its semantics), ops/ (each op family against torch),
nn/, optim/, api/ (the public surface, examples, README) and fuzz/ (the
differential fuzzers). `pythonpath = ["tests"]` in pyproject.toml makes
`import support` work from every folder."""

from __future__ import annotations
