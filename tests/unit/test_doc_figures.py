"""Docs that stay true: every figure README.md, results/README.md and docs/ quote from the bundled
reference run (and the tracked baseline) is the run's, as tools/doc_figures computes it from the
report's own selection; a wrong figure planted anywhere it checks fails, and --write mends it."""

import re
import shutil

import pytest

from tests.conftest import REPO
from tools.doc_figures import WRITE_COMMAND, blocks, check, computed, files, pictures, prose, write
from tools.doc_figures.facts import Facts


@pytest.fixture(scope="module")
def want():
    """What the docs must say, computed once (the report's context of the reference: about 3 s)."""
    return computed(Facts())


@pytest.fixture
def docs(tmp_path):
    """A copy of the docs the check reads, to plant wrong figures in."""
    for name in files(REPO) + list(pictures.PICTURES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, tmp_path / name)
    return tmp_path


def test_the_docs_quote_the_reference_run_as_it_is(want):
    stale = check(REPO, want)
    assert not stale, "\n".join(stale) + f"\nstale: run {WRITE_COMMAND}"


def test_results_readme_and_the_perf_notes_name_each_tracked_run_in_their_generated_block():
    for doc in ("results/README.md", "docs/perf-notes.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        block = next(m["body"] for m in blocks.BLOCK.finditer(text) if m["name"] == "tracked-runs")
        for path, run in Facts().tracked.items():
            assert f"`{path}`: run `{run.header.run_id}`" in block, (doc, path)


def _wrong(value: str) -> str:
    """Another figure of the same shape: its first digit moved by one, or the other words."""
    if re.search(r"\d", value):
        return re.sub(r"\d", lambda m: str((int(m[0]) + 1) % 10), value, count=1)
    return {"no alert": "1 alert", "correctly rounded": "within 2× of float32's rounding",
            "neither faster nor slower": "1.5 % faster"}[value]


@pytest.mark.parametrize("figure", prose.FIGURES, ids=lambda f: f.what)
def test_a_wrong_figure_planted_in_a_sentence_fails_and_write_mends_it(docs, want, figure):
    path = docs / figure.file
    text = path.read_text(encoding="utf-8")
    match = figure.regex().search(text)
    start, end = match.span("figure")
    path.write_text(text[:start] + _wrong(want.figures[figure]) + text[end:], encoding="utf-8")
    assert any(figure.what in line and "the reference run gives" in line for line in check(docs, want))
    assert write(docs, want) == [figure.file]
    assert check(docs, want) == [] and path.read_text(encoding="utf-8").split() == text.split()  # a wrapped figure joins its line


@pytest.mark.parametrize("name", sorted(blocks.RENDERERS))
def test_a_wrong_figure_planted_in_a_block_fails_and_write_mends_it(docs, want, name):
    rendered = want.blocks[name]
    number = re.search(r"\d[\d,.]*(?= (?:GB/s|cases|µs))", rendered) or re.search(r"\d[\d,]*\.\d", rendered)
    planted = rendered[:number.start()] + _wrong(number[0]) + rendered[number.end():]
    for path in blocks.PLACES:
        if name in blocks.PLACES[path]:
            text = (docs / path).read_text(encoding="utf-8")
            (docs / path).write_text(text.replace(rendered, planted), encoding="utf-8")
            assert any(line.startswith(f"{path}: block {name!r} is stale") for line in check(docs, want))
    write(docs, want)
    assert check(docs, want) == []


@pytest.mark.parametrize("figure", [f for f in prose.FIGURES if f.library], ids=lambda f: f.what)
def test_a_ratio_whose_sentence_names_another_library_than_the_reports_fails(want, figure):
    # What the README would meet when the report adopts another baseline: the figure may even stay,
    # but "than CUB" would be false.
    libraries = {**want.libraries, figure: "some_other_library"}
    text = (REPO / figure.file).read_text(encoding="utf-8")
    assert any("the report now compares with some_other_library" in line and figure.what in line
               for line in prose.problems(figure.file, text, want.figures, libraries))


def test_a_lost_or_unclosed_block_is_named_not_skipped(docs, want):
    notes = docs / "docs" / "perf-notes.md"
    text = notes.read_text(encoding="utf-8")
    notes.write_text(re.sub(r"<!-- figures:begin tracked-runs -->.*?<!-- figures:end tracked-runs -->\n", "", text, flags=re.S),
                     encoding="utf-8")
    readme = docs / "results" / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("<!-- figures:end tracked-runs -->", ""), encoding="utf-8")
    problems = check(docs, want)
    assert "docs/perf-notes.md: block 'tracked-runs' is missing: put <!-- figures:begin tracked-runs --> and its end back" in problems
    assert "results/README.md: a figures:begin without its figures:end (or the reverse)" in problems


def test_a_reworded_sentence_is_named_not_skipped(docs, want):
    readme = docs / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace("two-stage top-k pruning in one launch,", "two-stage top-k pruning, in one launch,"),
                      encoding="utf-8")
    assert any("top-k's fastest kernel against the library" in line and "found 0 times" in line for line in check(docs, want))


def test_a_screenshot_of_another_run_is_stale_and_says_how_to_make_it_again(docs, want):
    shot = docs / pictures.PICTURES[0]
    assert pictures.stamped_run(shot) == want.run_id
    pictures.stamp(shot, "2026-01-01-000000-nvidia-h200-000000")
    assert pictures.stamped_run(shot) == "2026-01-01-000000-nvidia-h200-000000"
    assert check(docs, want) == [f"{pictures.PICTURES[0]}: shows run 2026-01-01-000000-nvidia-h200-000000, the reference "
                                 f"run is {want.run_id}: {pictures.COMMAND}"]


def test_no_doc_cites_a_file_outside_the_repository():
    # A reader has the repository, not the project's notes: a figure cites its public source (an
    # article's title and author, a repository and file, a PR), never a private file.
    private = re.compile(r"ANCHORS(?:\.md)?|/work/shared|seeds/\d{3}_")
    docs = files(REPO) + ["results/reference/published.json"]
    found = [f"{name}:{number}: {line.strip()[:80]}" for name in docs
             for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1) if private.search(line)]
    assert not found, found
