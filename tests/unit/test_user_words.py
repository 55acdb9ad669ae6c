"""The words a newcomer reads in `primbench list` and in the variants' declared texts: no issue
numbers, no section marks to look up in a source they do not have, and a key that explains every
series and mark the listing shows (report/sources.py holds the words; the HTML report reads them too).

Only texts outside the identity hash are held to this: the CUDA sources' comments are hashed, and
rewording them would make `compare` report "code changed" against every committed run."""

import re
from types import SimpleNamespace

import pytest

from primbench import registry
from primbench.cli.info import cmd_list
from primbench.report import sources

# What a newcomer cannot resolve: a tracker's issue number, or a section mark of an article.
UNREADABLE = re.compile(r"issue \d+|§")
DECLARED_TEXTS = ("origin", "notes", "hazard", "tolerance_model")


def listing(capsys, op=None) -> tuple[list[str], list[str]]:
    """(the variant lines, the key's lines) of `primbench list [--op op]`."""
    assert cmd_list(SimpleNamespace(op=op)) == 0
    text = capsys.readouterr().out
    variant_part, _, key_part = text.partition("\n\n")
    return variant_part.splitlines(), key_part.splitlines()


def key_terms(key_lines) -> dict[str, str]:
    """The key's explained terms -> their words (its lines are "  term   words", after a heading;
    a term has single spaces inside, its padding at least two)."""
    return dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in key_lines[1:])


def test_the_listing_has_no_issue_numbers_or_section_marks(capsys):
    variant_lines, key_lines = listing(capsys)
    assert variant_lines and key_lines
    offending = [line for line in variant_lines + key_lines if UNREADABLE.search(line)]
    assert offending == []


@pytest.mark.parametrize("variant", registry.variants(), ids=lambda v: v.key)
def test_no_declared_text_of_a_variant_cites_an_issue_or_a_section_mark(variant):
    for field in DECLARED_TEXTS:
        text = getattr(variant, field) or ""
        assert not UNREADABLE.search(text), (field, text)


@pytest.mark.parametrize("op", [None, *registry.ops()])
def test_the_key_explains_every_series_the_listing_shows_and_only_those(capsys, op):
    variant_lines, key_lines = listing(capsys, op)
    shown = {line.split()[1] for line in variant_lines}  # the second column: the series
    terms = key_terms(key_lines)
    assert shown <= set(terms)
    assert {term for term in terms if term in sources.SERIES} == shown
    for series in shown:
        assert terms[series] == sources.SERIES[series]


def test_the_key_explains_each_mark_and_every_seed_article_an_origin_cites(capsys):
    variant_lines, key_lines = listing(capsys)
    terms = key_terms(key_lines)
    assert any(line.endswith("[hazard]") for line in variant_lines) and "correctness trap" in terms["[hazard]"]
    assert any(" blocks library " in line for line in variant_lines) and "blocks library" in terms
    cited = {f"seed {number}" for line in variant_lines for number in re.findall(r"\bseed (\d{3})\b", line)}
    assert cited == {"seed 000", "seed 002", "seed 004"}
    for seed in cited:
        assert terms[seed].startswith("source article: \"")


def test_every_registered_series_and_cited_source_has_words_in_sources():
    assert {v.series for v in registry.variants()} <= set(sources.SERIES)
    assert [s["id"] for s in sources.SOURCES] == ["seed000", "seed002", "seed004", "harris"]
    for source in sources.SOURCES:
        assert set(source) == {"id", "label", "title", "description", "original_title", "citation", "path"}
        assert all(source[field] for field in ("title", "description", "citation")), source["id"]


def test_the_key_to_sources_makes_no_network_request_and_cites_no_issue():
    # The report embeds these words; a URL there would be a link that leaves the static page.
    words = [*sources.SERIES.values(), sources.LIGHT,
             *(str(value) for source in sources.SOURCES for value in source.values())]
    assert not [w for w in words if "http" in w or "www." in w or UNREADABLE.search(w)]
    assert sources.LIGHT.count(". ") == 0 and sources.LIGHT.endswith(".")  # one sentence
