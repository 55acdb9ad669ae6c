"""`make test` changes nothing outside the project on a user's machine (issue 52, item 8): run as
root with apt, the tests install chromium and libxml2-utils only under CI (CI=true) or when asked
(PRIMBENCH_INSTALL_TEST_TOOLS=1); elsewhere a missing tool is a skip saying how to get it."""

import shutil
import subprocess

import pytest

from tests import debian_tools


@pytest.fixture
def root_with_apt(monkeypatch):
    """A machine where apt-get could install (root, apt-get and flock there) and the tool is
    missing; every process the tests would start is recorded instead of run."""
    started = []

    class Recorded:
        def __init__(self, argv, **_):
            started.append(argv)

        def communicate(self, timeout=None):
            return "", ""

    found = {"apt-get": "/usr/bin/apt-get", "flock": "/usr/bin/flock"}
    monkeypatch.setattr(debian_tools.os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", found.get)
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(debian_tools, "_installs", {})
    monkeypatch.setattr(debian_tools, "_why_not", {})
    for name in ("CI", debian_tools.ASK):
        monkeypatch.delenv(name, raising=False)
    debian_tools.debian_tool.cache_clear()
    yield started
    debian_tools.debian_tool.cache_clear()


def test_on_a_users_machine_nothing_is_installed_even_as_root_with_apt(root_with_apt):
    debian_tools.start_install("chromium", "chromium")
    assert debian_tools.debian_tool("xmllint", "libxml2-utils") is None
    assert root_with_apt == []
    why = debian_tools.why_not("libxml2-utils")
    assert "CI=true" in why and "PRIMBENCH_INSTALL_TEST_TOOLS=1" in why


@pytest.mark.parametrize("name, value", [("CI", "true"), ("CI", "1"), ("PRIMBENCH_INSTALL_TEST_TOOLS", "1")])
def test_under_ci_or_when_asked_the_missing_tool_is_installed_with_apt(root_with_apt, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    debian_tools.start_install("chromium", "chromium")
    assert len(root_with_apt) == 1 and "apt-get install -y --no-install-recommends chromium" in root_with_apt[0][-1]


@pytest.mark.parametrize("value", ["", "false", "0"])
def test_ci_set_to_false_is_not_ci(root_with_apt, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    debian_tools.start_install("chromium", "chromium")
    assert root_with_apt == []


def test_the_ci_script_runs_make_test_as_ci():
    from tests.conftest import REPO

    script = (REPO / ".ci" / "run").read_text()
    assert 'export CI="${CI:-true}"' in script and script.index("export CI=") < script.index("\nmake test\n")
