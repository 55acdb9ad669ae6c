"""The import rules of docs/architecture.md, read from the code: data flows one way, from the config
through measuring and the run file to everything that reads it.

Every import counts: the ones inside functions (primbench imports heavy modules lazily, and a lazy
import is still a dependency), relative ones, and a literal importlib.import_module("..."). An
import of the root package itself (`from primbench import __version__`) is not an edge: every
module imports it anyway. Circles are looked for between modules and between stage packages."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "primbench"

# Stages that come after the run file read it and nothing else: no GPU work, no CuPy.
AFTER_THE_RUN_FILE = ("primbench.runfile", "primbench.compare", "primbench.export", "primbench.report")
# profile/ replays a run's cases on the GPU; what the report reads of it is the counters file
# (runfile/counters.py).
GPU_SIDE = ("primbench.run", "primbench.measuring", "primbench.profile")
# The report's charts wing draws the rows a page hands it: of the rest of report/ it reads only the
# words a chart shows (numbers, a point's words and address, a case's energy in words), so a chart
# never depends on how a page is put together.
CHARTS_READ = ("formats", "anchors", "energy")
# The site wing is built on the report's pages, never under them; and outside report/ the wings are
# reached only through the command line (`publish`).
WINGS = ("primbench.report.charts", "primbench.report.site")


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under `package` (a package is its __init__)."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _resolve(target: str, modules: dict) -> str | None:
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node, name: str, path: Path, modules: dict) -> list[str]:
    """The dotted names an AST node imports: `import x`, `from x import y` (relative ones resolved),
    and a literal importlib.import_module("x") or __import__("x")."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = _package_of(name, path).split(".")
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if called in ("import_module", "__import__"):
            return [node.args[0].value]
    return []


def imports_of(path: Path, modules: dict, root: str, name: str = "") -> tuple[set[str], set[str]]:
    """(the package's modules this file imports, the outside top-level packages it imports)."""
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        for target in _targets(node, name, path, modules):
            if target == root or target.startswith(root + "."):
                resolved = _resolve(target, modules)
                if resolved and resolved != root:
                    inside.add(resolved)
            elif target:
                outside.add(target.partition(".")[0])
    return inside, outside


def import_graph(package: Path = PACKAGE) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> the package's modules it imports, module -> outside packages it imports)."""
    modules = module_names(package)
    inside, outside = {}, {}
    for name, path in modules.items():
        inside[name], outside[name] = imports_of(path, modules, package.name, name)
        inside[name].discard(name)
    return inside, outside


def _in(module: str, packages) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def broken_rules(inside: dict, outside: dict, root: str = "primbench") -> list[str]:
    """Every import that breaks a rule, as 'importer -> imported (the rule)'."""
    found = []
    for module, targets in sorted(inside.items()):
        after = [p.replace("primbench", root, 1) for p in AFTER_THE_RUN_FILE]
        gpu = [p.replace("primbench", root, 1) for p in GPU_SIDE]
        if _in(module, after):
            found += [f"{module} -> {t} (after the run file: no run/, measuring/ or profile/)" for t in sorted(targets) if _in(t, gpu)]
            found += [f"{module} -> cupy (after the run file: no CuPy)" for _ in ["cupy"] if "cupy" in outside[module]]
        if _in(module, [f"{root}.measuring"]):
            found += [f"{module} -> {t} (measuring/ never imports config/)" for t in sorted(targets) if _in(t, [f"{root}.config"])]
        if not _in(module, [f"{root}.cli", f"{root}.__main__"]):
            found += [f"{module} -> {t} (nothing imports cli/)" for t in sorted(targets) if _in(t, [f"{root}.cli"])]
        if _in(module, [f"{root}.report.charts"]):
            read = [f"{root}.report.charts"] + [f"{root}.report.{name}" for name in CHARTS_READ]
            found += [f"{module} -> {t} (charts/ reads only {', '.join(CHARTS_READ)} of report/)"
                      for t in sorted(targets) if _in(t, [f"{root}.report"]) and not _in(t, read)]
        site = f"{root}.report.site"
        if _in(module, [f"{root}.report"]) and not _in(module, [site]):
            found += [f"{module} -> {t} (the report's pages never import site/)" for t in sorted(targets) if _in(t, [site])]
        if not _in(module, [f"{root}.report", f"{root}.cli"]):
            wings = [p.replace("primbench", root, 1) for p in WINGS]
            found += [f"{module} -> {t} (outside report/, only cli/ imports its wings)" for t in sorted(targets) if _in(t, wings)]
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles (strongly connected sets of two modules or more), by Tarjan's algorithm."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_graph(graph: dict[str, set[str]], root: str = "primbench") -> dict[str, set[str]]:
    """The module graph with each stage package (root.config, root.run, ...) folded into one node;
    the core modules (root.variant, root.registry, ...) stay nodes of their own."""
    def unit(module):
        parts = module.split(".")
        return ".".join(parts[:2]) if len(parts) > 2 or module in packages else module

    packages = {m for m in graph if any(other.startswith(m + ".") for other in graph)}
    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folded.setdefault(unit(module), set()).update(unit(t) for t in targets)
    for node, targets in folded.items():
        targets.discard(node)
    return folded


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest path of imports (the graph has no circle, so it is well defined)."""
    memo: dict[str, list[str]] = {}

    def chain(node):
        if node not in memo:
            memo[node] = [node] + max((chain(nxt) for nxt in graph[node]), key=len, default=[])
        return memo[node]

    return max((chain(node) for node in sorted(graph)), key=len)


def test_after_the_run_file_nothing_imports_run_measuring_profile_or_cupy_and_measuring_never_imports_config():
    inside, outside = import_graph()
    assert broken_rules(inside, outside) == []


def test_there_is_no_import_circle_between_modules_or_between_packages():
    inside, _ = import_graph()
    assert circles(inside) == []
    assert circles(package_graph(inside)) == []


def test_the_stage_packages_are_there():
    # The rules above say nothing if the folders they name are gone or renamed.
    modules = module_names(PACKAGE)
    for package in (*AFTER_THE_RUN_FILE, *GPU_SIDE, "primbench.config", "primbench.verify", "primbench.profile",
                    "primbench.cli", "primbench.ops", *WINGS):
        assert any(_in(m, [package]) and m != package for m in modules), package
    print("longest import chain:", " -> ".join(longest_chain(import_graph()[0])))


def test_the_rules_catch_what_they_look_for(tmp_path):
    # A planted tree that breaks each rule, and a circle: each must be found.
    root = tmp_path / "pkg"
    files = {
        "__init__.py": "",
        "runfile/__init__.py": "", "runfile/io.py": "import cupy\nfrom pkg.run import runner\n",
        "run/__init__.py": "", "run/runner.py": "def f():\n    from pkg.cli import main\n",
        "measuring/__init__.py": "", "measuring/timing.py": "from pkg.config.loading import x\n",
        "config/__init__.py": "", "config/loading.py": "from pkg.report import a\n",
        "report/__init__.py": "", "report/a.py": "from pkg.report.b import y\n", "report/b.py": "from pkg.report import a\n",
        "report/formats.py": "", "report/charts/__init__.py": "",
        "report/charts/bars.py": "from pkg.report import formats\nfrom pkg.report.charts import axes\nfrom pkg.report.b import y\n",
        "report/charts/axes.py": "", "report/site/__init__.py": "", "report/site/publish.py": "from pkg.report import a\n",
        "report/render.py": "from pkg.report.site import publish\n",
        "export/__init__.py": "", "export/csv_table.py": "from pkg.report.charts import axes\n",
        "cli/__init__.py": "", "cli/main.py": "from pkg.run import runner\n",
        "compare/__init__.py": "", "compare/verdicts.py": "from ..measuring import timing\n",
        "compare/output.py": "import importlib\nrunner = importlib.import_module('pkg.run.runner')\n",
        "ops/__init__.py": "", "ops/sum.py": "from pkg.verify import outcomes\n",
        "verify/__init__.py": "", "verify/outcomes.py": "", "verify/sequence.py": "from pkg.ops import sum\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    inside, outside = import_graph(root)
    broken = broken_rules(inside, outside, root="pkg")
    assert "pkg.runfile.io -> pkg.run.runner (after the run file: no run/, measuring/ or profile/)" in broken
    assert "pkg.runfile.io -> cupy (after the run file: no CuPy)" in broken
    assert "pkg.measuring.timing -> pkg.config.loading (measuring/ never imports config/)" in broken
    assert "pkg.run.runner -> pkg.cli.main (nothing imports cli/)" in broken
    assert "pkg.compare.verdicts -> pkg.measuring.timing (after the run file: no run/, measuring/ or profile/)" in broken  # relative
    assert "pkg.compare.output -> pkg.run.runner (after the run file: no run/, measuring/ or profile/)" in broken  # importlib
    assert "pkg.report.charts.bars -> pkg.report.b (charts/ reads only formats, anchors, energy of report/)" in broken
    assert "pkg.report.render -> pkg.report.site.publish (the report's pages never import site/)" in broken
    assert "pkg.export.csv_table -> pkg.report.charts.axes (outside report/, only cli/ imports its wings)" in broken
    assert len(broken) == 9, broken
    assert sorted(circles(inside)) == [["pkg.cli.main", "pkg.run.runner"], ["pkg.report.a", "pkg.report.b"]]
    # ops -> verify.outcomes and verify.sequence -> ops: no circle of modules, but one of packages
    assert ["pkg.ops", "pkg.verify"] in circles(package_graph(inside, root="pkg"))
    assert longest_chain({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == ["a", "b", "c"]
