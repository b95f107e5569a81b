"""Paths every test module shares; a plain module, because two conftest.py files cannot both be imported by name."""
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "data" / "profiles.v1.json"
SOURCES = ("data", "site_src")


def copy_project(dest: Path) -> Path:
    """A copy of the project's inputs (data/ and site_src/) that a test may edit; the code stays installed."""
    for name in SOURCES:
        shutil.copytree(ROOT / name, Path(dest) / name)
    return Path(dest)


def site_view(root: Path = ROOT):
    """The site as templates see it (facts turned into views), computed from the project's data at `root`."""
    from generator.build import load_inputs
    from generator.facts import build_facts
    from generator.views import site_view as view

    config, profiles = load_inputs(root)
    return view(build_facts(profiles, config), config.title)
