"""pyproject.toml lists every package of the tree, so a non-editable install has them all."""

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _package_dirs():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return config["packages"], config["package-dir"]


def test_every_package_folder_is_listed():
    packages, package_dir = _package_dirs()
    found = set()
    for top in ("runtime", "generated", "tools"):
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT).parts
            found.add(".".join(("yamlgrad",) + parts))
    missing = sorted(found - set(packages))
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {missing}"
    assert package_dir["yamlgrad"] == "."
