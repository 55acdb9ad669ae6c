"""export/formats.py: a new export format is one new module and nothing else. A throwaway format,
written by the test as a module in a folder on primbench.export's path (where discovery looks, as
for a file of the package), is listed by `primbench export --help`, accepted by --format, written as
its writer returns it, and its options are checked; no other file is edited."""

import sys

import pytest

import primbench.export as package
from primbench.cli.main import main
from primbench.export.formats import export, registered
from primbench.runfile.io import load_run
from tests.conftest import RUNS

RUN_FILE = RUNS / "progression.jsonl.gz"  # 20 cases
MODULE = "throwaway_tsv"
THROWAWAY = '''"""A format only a test knows: one line per case, its key and the options it was given."""

from primbench.export.records import ExportFormat, Option


def _columns(text):
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{text!r} is not a column count, e.g. --columns 3")
    return int(text)


def write(run, columns=1, shout=False):
    text = "".join(f"{record.key}\\t{columns}\\n" for record in run.cases)
    return text.upper() if shout else text


def told(run):
    return f"tsv-test: {len(run.cases)} cases told"


FORMAT = ExportFormat(
    name="tsv-test", short="a test's TSV", readers="awk and cut", example="primbench export RUN --format tsv-test -o r.tsv",
    options=(Option("--columns", "how many columns, for the test", metavar="N", parse=_columns),
             Option("--shout", "all of it, 100 % of it, in capitals")),
    write=write, notice=told, listed=50)
'''


def _put_on_the_package_path(folder, monkeypatch, text: str, module: str = MODULE) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{module}.py").write_text(text)
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """THROWAWAY as primbench.export.throwaway_tsv for one test; forgotten afterwards."""
    _put_on_the_package_path(tmp_path / "formats", monkeypatch, THROWAWAY)
    yield
    for name in (MODULE, "second_csv"):
        sys.modules.pop(f"{package.__name__}.{name}", None)
        if hasattr(package, name):
            delattr(package, name)


def _export(capsys, *arguments) -> tuple[int, str, str]:
    try:
        code = main(["export", *map(str, arguments)])
    except SystemExit as exit_:  # argparse's own refusals and --help
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_built_in_formats_are_found_in_their_order_and_csv_comes_first():
    assert tuple(registered()) == ("csv", "gbench-json", "nvbench-json", "github-action")


def test_a_new_format_module_is_listed_in_the_help_with_its_readers_example_and_options(throwaway, capsys):
    code, printed, _ = _export(capsys, "--help")
    assert code == 0
    assert "tsv-test" in printed and "read by awk and cut" in printed and "e.g. primbench export RUN --format tsv-test" in printed
    assert "--columns N" in printed and "tsv-test only: how many columns" in printed
    assert "tsv-test only: all of it, 100 % of it" in " ".join(printed.split())  # a % in a record's help is kept
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "a test's TSV" in " ".join(capsys.readouterr().out.split())


def test_a_new_format_is_accepted_and_written_as_its_writer_returns_it(throwaway, capsys, tmp_path):
    out = tmp_path / "run.tsv"
    code, printed, said = _export(capsys, RUN_FILE, "--format", "tsv-test", "--columns", "3", "--shout", "-o", out)
    assert code == 0 and printed == f"tsv-test: {out} (20 cases)\n" and said == "tsv-test: 20 cases told\n"
    writer = sys.modules[f"{package.__name__}.{MODULE}"].write
    run = load_run(RUN_FILE)
    assert out.read_text() == writer(run, columns=3, shout=True) == export(run, "tsv-test", columns=3, shout=True)
    assert out.read_text().count("\t3\n") == 20
    code, printed, _ = _export(capsys, RUN_FILE, "--format", "tsv-test")
    assert code == 0 and printed == writer(run)  # standard output, its options' defaults


@pytest.mark.parametrize("arguments, says", [
    (["--format", "tsv-test", "--columns", "x"], "argument --columns: 'x' is not a column count, e.g. --columns 3"),
    (["--columns", "3"], "export: --columns goes with --format tsv-test only, not csv"),
    (["--format", "gbench-json", "--shout"], "export: --shout goes with --format tsv-test only, not gbench-json"),
    (["--format", "tsv-test", "--long"], "export: --long goes with --format csv only, not tsv-test"),
])
def test_a_new_formats_options_are_checked_in_one_line_and_nothing_is_written(throwaway, arguments, says, capsys, tmp_path):
    code, _, said = _export(capsys, RUN_FILE, *arguments, "-o", tmp_path / "out")
    assert code == 2 and len(said.strip().splitlines()) == 1 and says in said and not (tmp_path / "out").exists()


def test_two_formats_of_one_name_are_refused_at_once(throwaway, tmp_path, monkeypatch):
    _put_on_the_package_path(tmp_path / "more", monkeypatch, THROWAWAY.replace('name="tsv-test"', 'name="csv"')
                             .replace('"--columns"', '"--rows"').replace('"--shout"', '"--loud"'), "second_csv")
    with pytest.raises(ValueError, match="two export formats are named 'csv'"):
        registered()


def test_one_flag_in_two_formats_is_refused_at_once(throwaway, tmp_path, monkeypatch):
    _put_on_the_package_path(tmp_path / "more", monkeypatch, THROWAWAY.replace('name="tsv-test"', 'name="tsv-too"'),
                             "second_csv")
    with pytest.raises(ValueError, match="both declare --columns"):
        registered()
