"""`numbers [--data FILE] [--json]`: every exact figure the explainer prints, per draft profile."""

from __future__ import annotations

import json
from fractions import Fraction

from ..decimals import fixed
from ..model import analysis
from ..model.config import Seeds
from ..model.profiles import load_profiles
from ..paths import DEFAULT_PROFILES


def add_arguments(p) -> None:
    p.add_argument("--data", default=str(DEFAULT_PROFILES), help="profiles file (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object with exact fraction strings")
    p.add_argument("--seed", type=int, default=Seeds().authored_round, help="seed of the authored round's draws")


def run(args) -> int:
    profiles = load_profiles(args.data)
    rows = analysis.numbers_table(profiles, args.seed)
    if args.json:
        print(json.dumps({"profiles": rows, "target": analysis.target_numbers(profiles.target)}, indent=2))
        return 0
    cost = profiles.cost_model
    print(
        f"{args.data}: k = {profiles.k}, a draft step costs {cost.draft_step}, "
        f"verifying a round costs {cost.verify_step}"
    )
    for row in rows:
        n = len(row["round_length_distribution"])
        print(f"\n{row['id']}")
        print("  acceptance rate per position: " + ", ".join(row["accept_rates"]))
        print("  P(N = n), n = 1.." + str(n) + ": " + ", ".join(row["round_length_distribution"]))
        e, s = Fraction(row["expected_tokens"]), Fraction(row["speedup"])
        print(f"  expected tokens per round: {e} = {fixed(e, 4)}")
        print(f"  speedup: {s} = {fixed(s, 4)}x")
        print(f"  frames in the authored round: {row['frame_count']}")
        b = Fraction(row["block_expected_accepted"])
        print(f"  expected accepted proposals, checked as a block: {b} = {fixed(b, 4)}")
        print("  acceptance with two guesses per position: " + ", ".join(row["two_guess_acceptance"]))
        print("  acceptance with three guesses per position: " + ", ".join(row["three_guess_acceptance"]))
    tree = analysis.target_numbers(profiles.target)["best_tree_accepted"]
    print(f"\ntarget: the best token tree of n = 1..{len(tree)} nodes keeps, in expectation: " + ", ".join(tree))
    return 0
