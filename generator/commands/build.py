"""`build`: until the site pages exist, write the exact numbers to build/numbers.json."""
from __future__ import annotations

import json
from pathlib import Path

from ..config import load_config
from ..paths import BUILD, SITE_CONFIG
from ..profiles import load_profiles
from .numbers import profile_numbers


def add_arguments(p) -> None:
    p.add_argument("--out", default=str(BUILD), help="output folder (default: %(default)s)")


def run(args) -> int:
    config = load_config(SITE_CONFIG)
    profiles = load_profiles(config.profiles_path())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    payload = {"profiles": profile_numbers(profiles, config.seeds.authored_round)}
    (out / "numbers.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'numbers.json'}")
    return 0
