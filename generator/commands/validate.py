"""`validate [FILE]`: load a profiles file exactly as the build would, and say whether it passed."""
from __future__ import annotations

from ..paths import DEFAULT_PROFILES
from ..profiles import load_profiles


def add_arguments(p) -> None:
    p.add_argument("file", nargs="?", default=str(DEFAULT_PROFILES), help="profiles file (default: %(default)s)")


def run(args) -> int:
    profiles = load_profiles(args.file)
    drafts = ", ".join(d.id for d in profiles.drafts)
    print(f"{args.file}: ok ({len(profiles.tokens)} tokens, k = {profiles.k}, drafts: {drafts})")
    return 0
