"""What the pages need from the authored data beyond its being well formed, checked before any analysis.

`validate` and `build` both run `check_profiles`, so a file that `validate` calls ok never fails
later in the build on something the file decides. Each problem is one DataError line naming the
profiles file and what in it to change.
"""
from __future__ import annotations

from collections.abc import Callable

from .engine import REJECTED, Frame, run_round
from .lazy import lazy_numpy
from .profiles import DataError, Profiles

np = lazy_numpy(globals())

# The four things the pages show on an authored round, each found by one rule about a verify frame.
# The facts layer finds them with these same rules, so the check and the pages cannot drift apart.
AUTHORED_FACTS: dict[str, tuple[Callable[[Frame], bool], str]] = {
    "outright": (lambda f: f.ratio is not None and f.ratio >= 1,
                 "a proposal the target likes at least as much as the draft (accepted outright)"),
    "target_zero": (lambda f: f.p_target == 0, "a proposal the target gives probability 0"),
    "drops_later": (lambda f: f.verdict == REJECTED, "a rejected proposal"),
    "replacement": (lambda f: f.verdict == REJECTED, "a rejected proposal"),
}


def authored_facts(frames_by_draft) -> dict[str, tuple]:
    """(owner, frame) of the first verify frame showing each fact; `frames_by_draft` yields (owner, frames)."""
    found: dict[str, tuple] = {}
    for owner, frames in frames_by_draft:
        for f in frames:
            if f.kind != "verify":
                continue
            for name, (shows, _) in AUTHORED_FACTS.items():
                if shows(f):
                    found.setdefault(name, (owner, f))
    return found


def check_profiles(profiles: Profiles, authored_seed: int) -> None:
    """Refuse profiles whose authored rounds do not show what the pages walk through."""
    rounds = [
        (d.id, run_round(profiles.target, d.distributions, np.random.default_rng(authored_seed), d.proposals).frames)
        for d in profiles.drafts
    ]
    found = authored_facts(rounds)
    missing = [name for name in AUTHORED_FACTS if name not in found]
    if missing:
        wanted = " or ".join(dict.fromkeys(AUTHORED_FACTS[name][1] for name in missing))
        raise DataError(
            f"{profiles.source}: drafts, field proposals: no draft's authored round shows {wanted}, which the "
            f"pages walk through; change a proposal so that one does"
        )
