"""What the block stepper shows, frame by frame: every string it prints, computed here from the worked block
round (model/beyond.py), so that its script (assets/block-stepper.js) only plays frames and the page written
without the script (templates/widgets/block-stepper.html) prints the same words.
"""

from __future__ import annotations

from fractions import Fraction

from ..model.beyond import BeyondFacts, WorkedBlock
from ..model.engine import Verdict
from .decimals import fixed


def _u(x: Fraction) -> str:
    return fixed(float(x), 4)


def _chips(w: WorkedBlock, kept: int | None, correction: bool) -> list[list[str]]:
    """The proposals' chips: all proposed until the block decides; then the first tau kept and the rest dropped,
    and the correction (or bonus) token after them once it is drawn."""
    k = len(w.proposals)
    if kept is None:
        return [[t, "proposed"] for t in w.proposals]
    chips = [[t, Verdict.ACCEPTED if i < kept else Verdict.DROPPED] for i, t in enumerate(w.proposals)]
    if correction:
        chips.insert(kept, [w.correction, "bonus" if kept == k else "replacement"])
    return chips


def _tokenwise_note(w: WorkedBlock, i: int) -> str:
    """What the one-at-a-time check makes of position i (0-based) under the same draw."""
    s = w.steps[i]
    a = min(Fraction(1), s.ratio)
    if i > w.tokenwise_accepted:
        return (
            f"Token by token, the round ended at position {w.tokenwise_accepted + 1}; this proposal is never checked."
        )
    if a == 1:
        return "Token by token: p/q ≥ 1, accepted for certain."
    if i == w.tokenwise_accepted:
        stops = "is not below it, so the round stops here."
        return f"Token by token: accept with chance min(1, p/q) = {a}; u = {_u(s.u)} {stops}"
    return f"Token by token: accept with chance min(1, p/q) = {a}; u = {_u(s.u)} is below it, accepted."


def block_frames(w: WorkedBlock) -> list[dict]:
    k = len(w.proposals)
    listed = ", ".join(w.proposals)
    total = 3 + k + 1
    frames = [
        {
            "title": "The draft's proposals",
            "chips": _chips(w, None, False),
            "verdict": ["proposed", "Running weight w₀ = 1; kept so far: τ = 0"],
            "rows": [],
            "notes": [
                f"The draft proposed {listed}. The block rule walks the positions once, carrying a running weight "
                "wᵢ, and keeps the longest prefix whose draw uᵢ falls at or under its stopping chance hᵢ.",
            ],
        }
    ]
    before = Fraction(1)
    for i, s in enumerate(w.steps):
        keep = s.u <= s.stop
        rows = [
            ["p(" + s.proposal + "), q(" + s.proposal + ")", f"{s.p}, {s.q}"],
            ["ratio p/q", str(s.ratio)],
            ["running weight w" + _sub(s.position), f"min({before} × {s.ratio}, 1) = {s.weight}"],
        ]
        if s.surplus is None:
            rows.append(["stopping chance h" + _sub(s.position), f"= w{_sub(s.position)} = {s.stop}"])
        else:
            rows.append(["surplus ahead Z", str(s.surplus)])
            rows.append(["stopping chance h" + _sub(s.position), f"Z / (Z + 1 − w{_sub(s.position)}) = {s.stop}"])
        rows.append(["draw u" + _sub(s.position), _u(s.u)])
        relation = "≤" if keep else ">"
        verdict = (
            [Verdict.ACCEPTED, f"u{_sub(s.position)} {relation} h{_sub(s.position)}: so far τ = {s.kept_so_far}"]
            if keep
            else [Verdict.DROPPED, f"u{_sub(s.position)} {relation} h{_sub(s.position)}: τ stays {s.kept_so_far}"]
        )
        frames.append(
            {
                "title": f"Position {s.position}: {s.proposal}",
                "chips": _chips(w, None, False),
                "current": s.position,
                "verdict": verdict,
                "rows": rows,
                "notes": [_tokenwise_note(w, i)],
            }
        )
        before = s.weight
    kept = list(w.proposals[: w.tau])
    frames.append(
        {
            "title": f"τ = {w.tau}: the block keeps {w.tau} of {k}",
            "chips": _chips(w, w.tau, False),
            "verdict": [Verdict.ACCEPTED, "Kept: " + (", ".join(kept) if kept else "none")],
            "rows": [],
            "notes": [
                "τ is the last position whose draw fell at or under its stopping chance. "
                + (
                    "Every proposal stands, so the next token comes from the target's bonus row."
                    if w.tau == k
                    else f"The next token comes from max(w{_sub(w.tau)} · p − q, 0) at position {w.tau + 1}, "
                    "rescaled to sum to 1."
                )
            ],
        }
    )
    shares = [[t, str(x)] for t, x in zip(w.tokens, w.correction_row) if x]
    kind = "bonus" if w.tau == k else "replacement"
    frames.append(
        {
            "title": "The next token",
            "chips": _chips(w, w.tau, True),
            "verdict": [kind, f"{'Bonus' if kind == 'bonus' else 'Correction'}: {w.correction}"],
            "rows": [[t, x] for t, x in shares] + [["draw u′", _u(w.correction_u)]],
            "notes": [
                f"One draw u′ = {_u(w.correction_u)} from "
                + ("the target's bonus row." if w.tau == k else "the block's residual.")
            ],
        }
    )
    token_n = w.tokenwise_accepted + 1
    frames.append(
        {
            "title": "Block against token by token",
            "chips": _chips(w, w.tau, True),
            "verdict": [
                "bonus",
                f"Block: {w.tau + 1} tokens; token by token: {token_n} with the same draws",
            ],
            "rows": [
                ["kept in expectation, token by token", f"{w.tokenwise_expected} ≈ {fixed(w.tokenwise_expected, 2)}"],
                ["kept in expectation, as a block", f"{w.block_expected} ≈ {fixed(w.block_expected, 2)}"],
            ],
            "notes": [
                f"For these proposals, averaged over every draw. With this round's draws the one-at-a-time check "
                f"commits {token_n} token{'s' if token_n != 1 else ''}: "
                + ", ".join([*w.proposals[: w.tokenwise_accepted], w.tokenwise_correction])
                + "."
            ],
        }
    )
    for n, f in enumerate(frames, start=1):
        f["number"], f["count"] = n, len(frames)
        f.setdefault("current", 0)
    assert len(frames) == total
    return frames


def _sub(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def block_stepper(b: BeyondFacts) -> dict:
    """The block stepper's data: its frames, and the worked round as one table for reading without the script."""
    w = b.worked
    return {
        "draft": w.draft_name,
        "proposals": list(w.proposals),
        "frames": block_frames(w),
        "table": [
            {
                "position": s.position,
                "proposal": s.proposal,
                "p": str(s.p),
                "q": str(s.q),
                "ratio": str(s.ratio),
                "weight": str(s.weight),
                "stop": str(s.stop),
                "u": _u(s.u),
                "keep": s.u <= s.stop,
            }
            for s in w.steps
        ],
    }


def tree_view(b: BeyondFacts) -> dict:
    """The small tree for the page: each node's number (breadth-first, from 1), token, path and mask row, and the
    roots with their children nested, for a recursive list."""
    nodes = [
        {"number": i + 1, "token": token, "parent": parent, "mask": list(b.small_tree_mask[i]), "children": []}
        for i, (token, parent) in enumerate(b.small_tree)
    ]
    for n in nodes:
        chain, at = [n["token"]], n["parent"]
        while at is not None:
            chain.insert(0, nodes[at]["token"])
            at = nodes[at]["parent"]
        n["path"] = " → ".join(chain)
        if n["parent"] is not None:
            nodes[n["parent"]]["children"].append(n)
    return {"nodes": nodes, "roots": [n for n in nodes if n["parent"] is None]}
