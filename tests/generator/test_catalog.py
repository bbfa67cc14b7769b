"""tools/catalog.py: each helper's module, read from runtime/ops/ with ast."""

from __future__ import annotations

from pathlib import Path

import pytest

from yamlgrad.tools.catalog import CatalogError, runtime_catalog, scan


def test_runtime_modules_declare_their_helpers() -> None:
    catalog = runtime_catalog()
    assert catalog.kernels and catalog.backward_helpers and catalog.composite_helpers
    assert catalog.backward_helpers["sum_backward"] == "reductions"


def test_a_name_declared_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('KERNELS = ("clamp",)\n')
    (tmp_path / "b.py").write_text('KERNELS = ("clamp",)\nBACKWARD_HELPERS = ()\n')
    with pytest.raises(CatalogError, match="'clamp' is declared by both 'a' and 'b'"):
        scan(tmp_path)


def test_declarations_must_be_literal(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("KERNELS = tuple(['clamp'])\n")
    with pytest.raises(CatalogError, match="literal tuple"):
        scan(tmp_path)
    (tmp_path / "a.py").write_text('KERNELS = ("clamp",)\n')
    (tmp_path / "c.py").write_text('BACKWARD_HELPERS = ("clamp_backward",)\n')
    catalog = scan(tmp_path)  # the failed scan above was not cached
    assert dict(catalog.kernels) == {"clamp": "a"}
    assert dict(catalog.backward_helpers) == {"clamp_backward": "c"}
