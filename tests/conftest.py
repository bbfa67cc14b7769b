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
