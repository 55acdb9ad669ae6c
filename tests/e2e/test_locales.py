"""Every file primbench reads or hashes is read as UTF-8 whatever the locale: a variant's hash is the
same under an ASCII (C), a Latin-1 and a UTF-8 locale, so `check` never calls an unchanged kernel
changed because the machine's locale differs, and `list` and `run --dry-run` work under each, a
plugin's non-ASCII text printed as escapes where the terminal cannot show it.

One Python process per locale, with Python's UTF-8 mode off (under C it would otherwise switch
itself on and hide the locale). Where no Latin-1 locale is installed, one is compiled into a
temporary folder with localedef (LOCPATH); without localedef that locale is skipped, saying so."""

from __future__ import annotations

import json
import locale
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from primbench import registry
from tests.conftest import REPO

# The child: every variant's hash (the plugin's among them), then `list` and `run --dry-run` of the
# default config through the CLI, on the locale's own stdout; the figures go to a UTF-8 file.
CHILD = """
import json, locale, sys
from primbench import registry
from primbench.cli.main import main
registry.load_plugin(sys.argv[2])
codes = [main(["list", "--plugin", sys.argv[2]]), main(["run", "configs/default.yaml", "--dry-run"])]
found = {"encoding": locale.getpreferredencoding(False), "codes": codes,
         "hashes": {v.key: v.hash() for v in registry.variants()}}
open(sys.argv[1], "w", encoding="utf-8").write(json.dumps(found))
"""
LATIN1_NAMES = ("en_US.ISO-8859-1", "en_US.iso88591", "de_DE.ISO-8859-1", "fr_FR.ISO-8859-1")
# A comment and an origin a UTF-8 user writes: both must read alike under every locale.
CU = "// Gr\u00fc\u00dfe, caf\u00e9: \u00b5s \u2014 \u65e5\u672c\n__global__ void locale_probe(float* x) { x[0] = 1.0f; }\n"


def _installed_latin1() -> str | None:
    saved = locale.setlocale(locale.LC_CTYPE)
    try:
        for name in LATIN1_NAMES:
            try:
                locale.setlocale(locale.LC_CTYPE, name)
            except locale.Error:
                continue
            return name
        return None
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


@pytest.fixture(scope="module")
def latin1(tmp_path_factory) -> dict:
    """The environment of a Latin-1 locale: an installed one, else one localedef compiles."""
    name = _installed_latin1()
    if name:
        return {"LC_ALL": name}
    if not shutil.which("localedef") or not Path("/usr/share/i18n/locales/en_US").is_file():
        pytest.skip("no Latin-1 locale installed and no localedef with en_US's sources to build one")
    folder = tmp_path_factory.mktemp("locales")
    subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
                   capture_output=True, timeout=60)
    if not (folder / "en_US.ISO-8859-1").exists():
        pytest.skip("localedef could not build en_US.ISO-8859-1")
    return {"LC_ALL": "en_US.ISO-8859-1", "LOCPATH": str(folder)}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "probe.cu").write_text(CU, encoding="utf-8")
    plugin = folder / "locale_probe.py"
    plugin.write_text(
        "import dataclasses\nfrom pathlib import Path\nfrom primbench import registry\nfrom primbench.api import register_variant\n"
        "register_variant(dataclasses.replace(registry.get('reduce', 'vector_load_sum'), name='locale_probe', "
        "origin='caf\u00e9 \u2014 \u65e5\u672c', source=str(Path(__file__).with_name('probe.cu')), "
        "kernels=('locale_probe',)))\n", encoding="utf-8")
    return plugin


def _under(environment: dict, plugin: Path, tmp_path: Path) -> tuple[dict, subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8"))}
    env.update(environment, PYTHONUTF8="0", PYTHONPATH=str(REPO))
    out = tmp_path / f"found-{environment['LC_ALL']}.json"
    done = subprocess.run([sys.executable, "-c", CHILD, str(out), str(plugin)], cwd=REPO, env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")[-2000:]
    return json.loads(out.read_text(encoding="utf-8")), done


@pytest.fixture(scope="module")
def hashes_here(plugin) -> dict:
    """Every built-in variant's hash as this process (and the reference run) has it, and the
    plugin's variant's, hashed here without registering it."""
    import dataclasses

    probe = dataclasses.replace(registry.get("reduce", "vector_load_sum"), name="locale_probe",
                                source=str(plugin.with_name("probe.cu")), kernels=("locale_probe",))
    return {**{v.key: v.hash() for v in registry.variants()}, probe.key: probe.hash()}


@pytest.mark.parametrize("name", ["C", "C.UTF-8", "Latin-1"])
def test_hashes_list_and_dry_run_are_the_same_under_every_locale(name, plugin, tmp_path, request, hashes_here):
    environment = request.getfixturevalue("latin1") if name == "Latin-1" else {"LC_ALL": name}
    found, done = _under(environment, plugin, tmp_path)
    wanted_encoding = {"C": "ANSI_X3.4-1968", "C.UTF-8": "UTF-8", "Latin-1": "ISO-8859-1"}[name]
    assert found["encoding"].upper().replace("UTF8", "UTF-8") == wanted_encoding  # the child really ran under it
    assert found["codes"] == [0, 0]
    assert found["hashes"] == hashes_here
    stdout = done.stdout.decode("latin-1")
    assert "reduce/locale_probe" in stdout and "histogram/cub_histogram_even/int32/n=67108864" in stdout
    if name == "C":  # an ASCII terminal: the plugin's origin as escapes, not an error
        assert "caf\\xe9 \\u2014 \\u65e5\\u672c" in stdout
