"""What the hostile tests share as fixtures."""

import gzip
from pathlib import Path

import pytest

from tests.hostile.corpus import GOOD_RUN


@pytest.fixture
def folder(tmp_path) -> Path:
    """good.jsonl and new.jsonl (the same small real run), in a folder of their own."""
    where = tmp_path / "case"
    where.mkdir()
    text = gzip.decompress(GOOD_RUN.read_bytes())
    (where / "good.jsonl").write_bytes(text)
    (where / "new.jsonl").write_bytes(text)
    return where
