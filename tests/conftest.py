import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "data" / "profiles.v1.json"


@pytest.fixture
def raw_profiles():
    """The shipped profiles file as plain JSON, for tests that break one thing in it."""
    return json.loads(PROFILES.read_text(encoding="utf-8"))


@pytest.fixture
def project(tmp_path):
    """A copy of the project's inputs in a temporary folder, so a test can edit them freely."""
    for name in ("data", "site_src"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path
