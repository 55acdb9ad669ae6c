"""The code's shape, as docs/architecture.md states it: no module over 400 lines and no function
over 60; nothing splits a case key string back into its parts; and outside ops/ and kernels/ no
code names an op or a variant (generic modules never branch on them: an op's knowledge lives in
its own module)."""

import ast
import re
from pathlib import Path

import pytest

from primbench import registry

PACKAGE = Path(__file__).resolve().parents[2] / "primbench"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _functions(tree):
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_module_is_over_400_lines_and_no_function_over_60():
    long_modules = {p.relative_to(PACKAGE).as_posix(): n for p in MODULES if (n := len(p.read_text().splitlines())) > 400}
    long_functions = [f"{p.relative_to(PACKAGE).as_posix()}:{f.name} ({f.end_lineno - f.lineno + 1} lines)"
                      for p in MODULES for f in _functions(ast.parse(p.read_text())) if f.end_lineno - f.lineno + 1 > 60]
    assert not long_modules and not long_functions, (long_modules, long_functions)


def test_nothing_splits_a_case_key_string():
    pattern = re.compile(r"""(\.key|\[["']key["']\]|\bkey)\s*\.\s*(r?split|partition)\(""")
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in MODULES for i, line in enumerate(p.read_text().splitlines(), 1)
             if pattern.search(line)]
    assert not found, found


def _docstrings(tree) -> set[int]:
    """ids of the string constants that are docstrings (a module's, class's or function's first statement)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_outside_ops_and_kernels_no_code_names_an_op_or_a_variant():
    names = set(registry.ops()) | {v.name for v in registry.variants()}
    generic = [p for p in MODULES if p.parent.name not in ("ops",) and "kernels" not in p.parts]
    found = []
    for path in generic:
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value in names:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert not found, found


def test_the_checks_above_would_catch_what_they_look_for(tmp_path):
    # The patterns must match the shapes they guard against, or the tests above prove nothing.
    assert re.search(r"""(\.key|\[["']key["']\]|\bkey)\s*\.\s*(r?split|partition)\(""", 'op, name = case["key"].split("/", 1)')
    tree = ast.parse('def f(op):\n    """Reduce docs: "reduce"."""\n    return op == "reduce"\n')
    constants = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert [c.value for c in constants if id(c) not in _docstrings(tree)] == ["reduce"]


def test_the_names_public_before_the_stage_packages_still_import():
    # Users' scripts wrote these before config/ and report/ were packages; they load on first use.
    import primbench
    from primbench.api import TimingPolicy
    from primbench.config import Config, ConfigError, TimingPolicy as OldPath, load_config  # noqa: F401
    from primbench.report import render_report  # noqa: F401

    assert primbench.TimingPolicy is TimingPolicy is OldPath
    with pytest.raises(AttributeError):
        primbench.config.no_such_name  # noqa: B018


def test_every_package_of_primbench_is_installed():
    # A new stage package that pyproject.toml's list lacks imports in a checkout and is missing from
    # a pip install (export/ was, once: `primbench export` then failed with ModuleNotFoundError).
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    assert found - listed == set(), "add them to [tool.setuptools] packages in pyproject.toml"
