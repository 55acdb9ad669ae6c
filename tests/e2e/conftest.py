"""Fixtures the browser tests share."""

import pytest

from tests.debian_tools import ASK, debian_tool, start_install, why_not
from tests.e2e import browser

start_install("chromium", "chromium")  # at collection: the install overlaps the rest of the suite


@pytest.fixture(scope="module")
def chromium():
    found = browser.chromium() or debian_tool("chromium", "chromium")
    if found is None:
        pytest.skip(f"no chromium: install Debian's chromium, or run with {ASK}=1 as root ({why_not('chromium')})")
    return found
