"""Where the project's inputs and output live, relative to the working directory the command runs in."""

from pathlib import Path

DATA = Path("data")
DEFAULT_PROFILES = DATA / "profiles.v1.json"
SITE_CONFIG = DATA / "site.yaml"
SITE_SRC = Path("site_src")
BUILD = Path("build")
CACHE = Path(".cache") / "generator"
