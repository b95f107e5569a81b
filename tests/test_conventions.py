"""What a project is expected to have: a version, a command, a licence, a way to cite it."""

import importlib
import subprocess
import sys
import tomllib

import yaml

import generator
from support import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_version_prints_the_package_version_and_exits_0():
    done = subprocess.run([sys.executable, "-m", "generator", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"specdec-explainer {generator.__version__}\n"
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "generator.__version__"}


def test_the_console_script_is_the_same_entry_point_as_python_m_generator():
    target = PYPROJECT["project"]["scripts"]["specdec-site"]
    module, _, function = target.partition(":")
    assert getattr(importlib.import_module(module), function) is importlib.import_module("generator.__main__").main


def test_the_citation_file_matches_the_package():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == generator.__version__
    assert cff["title"] == yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))["title"]
    assert cff["authors"] and cff["license"] == PYPROJECT["project"]["license"]


def test_code_and_content_each_have_a_licence():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    content = (ROOT / "LICENSE-CONTENT.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in content and "https://creativecommons.org/licenses/by/4.0/" in content
    assert "LICENSE-CONTENT.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_footer_states_the_licences_the_licence_files_give():
    from generator.site.publish import BuildInfo

    info = BuildInfo()
    assert info.code_licence == PYPROJECT["project"]["license"]
    content = (ROOT / "LICENSE-CONTENT.md").read_text(encoding="utf-8")
    assert info.content_licence in content and info.content_licence_url in content
