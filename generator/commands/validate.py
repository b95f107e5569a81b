"""`validate [FILE]`: load a profiles file exactly as the build would, run every check the build runs on it,
and say whether it passed; then the same for data/practice.yaml, the numbers the site quotes from engines, when
the project has one (or lists the page that quotes it)."""

from __future__ import annotations

from pathlib import Path

from ..model.config import SiteConfig, load_config
from ..model.practice import load_practice
from ..model.profiles import load_profiles
from ..model.requirements import check_profiles
from ..paths import DEFAULT_PROFILES, SITE_CONFIG


def add_arguments(p) -> None:
    p.add_argument("file", nargs="?", default=str(DEFAULT_PROFILES), help="profiles file (default: %(default)s)")


def run(args) -> int:
    config = load_config(SITE_CONFIG) if Path(SITE_CONFIG).is_file() else SiteConfig()  # the seeds the build uses
    profiles = load_profiles(args.file)
    check_profiles(profiles, config.seeds.authored_round)
    drafts = ", ".join(d.id for d in profiles.drafts)
    print(f"{args.file}: ok ({len(profiles.tokens)} tokens, k = {profiles.k}, drafts: {drafts})")
    quoted = Path(SITE_CONFIG).parent / "practice.yaml"  # where the build reads it: beside site.yaml
    if quoted.is_file() or config.has_page("practice"):
        practice = load_practice(quoted)
        print(f"{quoted}: ok ({len(practice.quotes())} quoted numbers from {len(practice.sources)} sources)")
    return 0
