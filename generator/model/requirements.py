"""What the pages need from the authored data beyond its being well formed, checked before any analysis.

`validate` runs `check_profiles`, and the build checks the authored rounds its facts are made of with
`check_rounds` before anything else is computed, so a file that `validate` calls ok never fails later in the
build on something the file decides. Each problem is one DataError line naming the
profiles file and what in it to change.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

import numpy as np

from .engine import REJECTED, Frame, Round, run_round
from .profiles import DataError, Profiles

# The four things the pages show on an authored round, each found by one rule about a verify frame.
# The facts layer finds them with these same rules, so the check and the pages cannot drift apart.
AUTHORED_FACTS: MappingProxyType[str, tuple[Callable[[Frame], bool], str]] = MappingProxyType(
    {
        "outright": (
            lambda f: f.ratio is not None and f.ratio >= 1,
            "a proposal the target likes at least as much as the draft (accepted outright)",
        ),
        "target_zero": (lambda f: f.p_target == 0, "a proposal the target gives probability 0"),
        "drops_later": (lambda f: f.verdict == REJECTED, "a rejected proposal"),
        "replacement": (lambda f: f.verdict == REJECTED, "a rejected proposal"),
    }
)


def authored_facts(frames_by_draft) -> dict[str, tuple]:
    """(owner, frame) of the first verify frame showing each fact; `frames_by_draft` yields (owner, frames)."""
    found: dict[str, tuple] = {}
    for owner, frames in frames_by_draft:
        for f in frames:
            for name, (shows, _) in AUTHORED_FACTS.items():
                if f.kind == "verify" and shows(f):
                    found.setdefault(name, (owner, f))
    return found


OPENING_FRAMES = 3  # the first draft's worked round decides a check by a uniform draw within this many frames


def first_chance_frame(frames) -> int | None:
    """The 1-based number of the first check frame whose verdict a uniform draw decided, or None."""
    return next((n for n, f in enumerate(frames, start=1) if f.kind == "verify" and f.u is not None), None)


def authored_rounds(profiles: Profiles, seed: int) -> tuple[Round, ...]:
    """Each draft's authored round: its own proposals, and the draws from a Generator seeded with `seed`."""
    return tuple(
        run_round(profiles.target, d.distributions, np.random.default_rng(seed), d.proposals) for d in profiles.drafts
    )


def check_profiles(profiles: Profiles, authored_seed: int) -> None:
    """Refuse profiles whose authored rounds do not show what the pages walk through."""
    check_rounds(profiles, authored_rounds(profiles, authored_seed))


def check_rounds(profiles: Profiles, rounds: tuple[Round, ...]) -> None:
    """check_profiles on the authored rounds, already run (the facts are made of them)."""
    found = authored_facts((d.id, r.frames) for d, r in zip(profiles.drafts, rounds))
    missing = [name for name in AUTHORED_FACTS if name not in found]
    if missing:
        wanted = " or ".join(dict.fromkeys(AUTHORED_FACTS[name][1] for name in missing))
        raise DataError(
            f"{profiles.source}: drafts, field proposals: no draft's authored round shows {wanted}, which the "
            f"pages walk through; change a proposal so that one does"
        )
    first = first_chance_frame(rounds[0].frames)
    if first is None or first > OPENING_FRAMES:
        raise DataError(
            f"{profiles.source}: drafts[0], field proposals: the stepper opens on this draft's authored round, "
            f"which must leave a check to a uniform draw within its first {OPENING_FRAMES} frames; propose, at "
            f"position 1 or 2, a token the draft gives more probability than the target (and the target more than 0)"
        )
