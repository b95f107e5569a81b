"""Paths every test module shares; a plain module, because two conftest.py files cannot both be imported by name."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "data" / "profiles.v1.json"
