"""docs/architecture.md's package table against the package itself: each package's row names exactly
the modules it holds (every .py but __init__.py) and its subpackages (`charts/`), and every package
has a row. A module added, moved or removed without its row fails here, so the one-page map of the
project cannot drift from the code.

A row names a module in backticks outside parentheses; whatever stands in parentheses describes it
(`loading` (YAML → a validated `Config`)), and its backticked words are not names."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "primbench"
DOC = REPO / "docs" / "architecture.md"
ROW = re.compile(r"^\|\s*`([^`]+)`[^|]*\|(.*)\|\s*$")
# ops/ has one module per op, found by name (ops/__init__.py): its row says so rather than naming
# them, so that adding an op stays kernels/<op>.cu, kernels/<op>.py and ops/<op>.py, and nothing else.
ONE_MODULE_PER_OP = "ops/"


def table_rows(text: str) -> dict[str, str]:
    """{package as its row writes it ('primbench/', 'report/charts/'): the row's description}, from
    the table under '## The packages'."""
    section = text.split("## The packages", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            assert match[1] not in rows, f"{DOC.name}: two rows for `{match[1]}`"
            rows[match[1]] = match[2]
    return rows


def named(description: str) -> set[str]:
    """The backticked words of a row that stand outside parentheses (a parenthesis inside backticks,
    as in `primbench.measure()`, is code, not the row's)."""
    names, depth, code, word = set(), 0, False, []
    for char in description:
        if char == "`":
            if code and depth == 0:
                names.add("".join(word))
            code, word = not code, []
        elif code:
            word.append(char)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
    return names


def registers_an_op(path: Path) -> bool:
    """Whether a module of ops/ declares an op: it calls register(...) with its OpChecks."""
    return any(isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def packages(root: Path = PACKAGE) -> dict[str, Path]:
    """{the package as a row writes it: its folder}, for the root and every package under it."""
    found = {f"{root.name}/": root}
    for init in sorted(root.rglob("__init__.py")):
        if init.parent != root:
            found[init.parent.relative_to(root).as_posix() + "/"] = init.parent
    return found


def held(label: str, folder: Path, root: Path = PACKAGE) -> set[str]:
    """What a package's row must name: its modules, and its subpackages (the root's subpackages are
    the table's other rows)."""
    modules = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    if label == ONE_MODULE_PER_OP:
        modules = {m for m in modules if not registers_an_op(folder / f"{m}.py")}
    subpackages = set() if folder == root else {f"{p.parent.name}/" for p in folder.glob("*/__init__.py")}
    return modules | subpackages


def row_mismatches(text: str, root: Path = PACKAGE) -> list[str]:
    """Every way the table and the package differ, in words."""
    rows, found, wrong = table_rows(text), packages(root), []
    for label in sorted(found.keys() - rows.keys()):
        wrong.append(f"{label} has no row in {DOC.name}'s package table")
    for label in sorted(rows.keys() - found.keys()):
        wrong.append(f"the row `{label}` names no package: there is no {label} holding an __init__.py")
    for label in sorted(rows.keys() & found.keys()):
        names, modules = named(rows[label]), held(label, found[label], root)
        if names - modules:
            wrong.append(f"the row `{label}` names what {label} does not hold: {', '.join(sorted(names - modules))}")
        if modules - names:
            wrong.append(f"the row `{label}` leaves out what {label} holds: {', '.join(sorted(modules - names))}")
    return wrong


def test_each_package_row_names_exactly_the_modules_it_holds():
    wrong = row_mismatches(DOC.read_text(encoding="utf-8"))
    assert not wrong, ("docs/architecture.md and the package differ (a row names a module in backticks, outside "
                       "parentheses):\n  " + "\n  ".join(wrong))


@pytest.fixture
def planted(tmp_path) -> Path:
    root = tmp_path / "primbench"
    for name, text in {"__init__.py": "", "api.py": "", "ops/__init__.py": "", "ops/sections.py": "",
                       "ops/reduce.py": "REDUCE = register(checks)\n", "report/__init__.py": "",
                       "report/render.py": "", "report/charts/__init__.py": "", "report/charts/svg.py": ""}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


TABLE = """## The packages

| package | what lives there |
|---|---|
| `primbench/` (the core) | `api` (what a plugin imports: `Variant`) |
| `ops/` | one module per op (`OpChecks`); `sections` |
| `report/` | `render` (a run → one HTML file), `charts/` |
| `report/charts/` | `svg` (the canvas; `measure()` is not a name) |

## Rules
"""


def test_a_table_that_matches_passes_and_one_name_less_or_more_fails(planted):
    # The test above must be able to fail: a name removed, one added, a row missing or stale.
    assert row_mismatches(TABLE, planted) == []
    assert row_mismatches(TABLE.replace(", `charts/`", ""), planted) == [
        "the row `report/` leaves out what report/ holds: charts/"]
    assert row_mismatches(TABLE.replace("`svg` (", "`svg`, `axes` ("), planted) == [
        "the row `report/charts/` names what report/charts/ does not hold: axes"]
    assert row_mismatches(TABLE.replace("| `ops/` | one module per op (`OpChecks`); `sections` |\n", ""), planted) == [
        f"ops/ has no row in {DOC.name}'s package table"]
    (planted / "report" / "charts" / "svg.py").unlink()
    (planted / "report" / "charts" / "canvas.py").write_text("")
    assert row_mismatches(TABLE, planted) == [
        "the row `report/charts/` names what report/charts/ does not hold: svg",
        "the row `report/charts/` leaves out what report/charts/ holds: canvas"]
