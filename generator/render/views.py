"""What templates need, made from the facts: frame titles, chips, anchors, token labels, figure names.

Views add presentation (labels instead of token indices, HTML anchors, titles) and never a new
number: every probability here is the facts' own Fraction. A view exposes its facts' fields under
the same names, so a template writes `p.expected_tokens` whether it holds facts or a view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from ..decimals import fixed  # the pages' rounding rule (a leaf module: no Jinja)
from ..model.engine import ACCEPTED, DROPPED, PENDING, REJECTED, Frame, Round, Verdict
from ..model.facts import Facts, FigureRef, Notable, PositionFacts, ProfileFacts, SpeedupPanel


@dataclass(frozen=True)
class Chip:
    position: int
    token: str
    state: str  # proposed, accepted, rejected, dropped, replacement, bonus


@dataclass(frozen=True)
class Bar:
    """One token's row in a check frame: the target's p and the draft's q, drawn as bars of that length."""

    token: str
    p: Fraction
    q: Fraction
    proposed: bool
    overlap: Fraction  # min(p, q): what acceptance delivers of this token
    excess: Fraction  # max(0, p - q): what a rejection's residual tops up


def bars(f: Frame, position: PositionFacts | None, tokens) -> tuple[Bar, ...]:
    """p and q over every token at a check frame's position."""
    if f.kind != "verify" or position is None or position.draft is None:
        return ()
    return tuple(
        Bar(t, position.target[i], position.draft[i], i == f.proposal, position.overlap[i], position.excess[i])
        for i, t in enumerate(tokens)
    )


def _draw_text(u: Fraction | float | None) -> str:
    """A uniform draw as the stepper prints it: four decimals by the pages' rounding rule ("" for none)."""
    return "" if u is None else fixed(float(u), 4)


@dataclass(frozen=True)
class FrameView:
    id: str  # the HTML anchor, e.g. "frame-divergent-authored-4"
    number: int  # 1-based within its round
    kind: str
    title: str
    position: int | None
    proposal: str | None
    p_target: Fraction | None
    p_draft: Fraction | None
    ratio: Fraction | None
    accept_probability: Fraction | None
    u: float | None
    u_text: str  # the draw that settles a check decided by chance, as printed ("" for none)
    verdict: Verdict | None
    residual: tuple[tuple[str, Fraction], ...] | None
    replacement: str | None
    replacement_u_text: str
    bonus_distribution: tuple[tuple[str, Fraction], ...] | None
    bonus: str | None
    bonus_u_text: str
    chips: tuple[Chip, ...]
    certain: bool  # the verdict needed no draw
    bars: tuple[Bar, ...] = ()  # p and q over every token, in a check frame
    shown_chips: tuple[Chip, ...] = ()  # what the frame shows before its verdict: the previous frame's chips

    @property
    def exact_bars(self) -> tuple[Bar, ...]:
        """The tokens the exactness picture draws: those either distribution gives some probability."""
        return tuple(b for b in self.bars if b.p > 0 or b.q > 0)

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(c.token for c in self.chips if c.state == DROPPED)

    # What the stepper says in a frame, in the order a reader meets it: the evidence, then the verdict.
    # The page's template and the stepper's script print these same strings.

    @property
    def evidence(self) -> str:
        """The rule applied to the proposal, with its numbers, and what decides it; no verdict."""
        if self.kind != "verify":
            return ""
        said = f"Accept probability min(1, p/q) = min(1, {self.p_target} ÷ {self.p_draft}) = {self.accept_probability}."
        if not self.certain:
            said += f" A uniform draw u keeps “{self.proposal}” if u < {self.accept_probability}:"
        return said

    @property
    def verdict_note(self) -> str:
        if self.kind != "verify":
            return ""
        if self.certain:
            if self.verdict == ACCEPTED:
                return "the accept probability is 1, so no draw is needed."
            return "the target gives it probability 0, so no draw is needed."
        relation = "below" if self.verdict == ACCEPTED else "not below"
        return f"u = {self.u_text} is {relation} {self.accept_probability}."


@dataclass(frozen=True)
class RoundView:
    id: str  # "authored" or "sampled-1", ...
    label: str
    proposals: tuple[str, ...]
    committed: tuple[str, ...]
    accepted: int
    bonus: str | None
    frames: tuple[FrameView, ...]

    @property
    def frame_count(self) -> int:
        return len(self.frames)

    @property
    def positions_tried(self) -> int:
        """How many proposals the target actually checked: one verify frame each."""
        return sum(1 for f in self.frames if f.kind == "verify")

    @property
    def has_bonus(self) -> bool:
        return self.bonus is not None

    @property
    def summary(self) -> str:
        """What the round's last frame says: how many proposals passed and what one target pass committed."""
        n = len(self.committed)
        bonus = " and the bonus drawn" if self.has_bonus else ""
        return (
            f"The round is over: {self.accepted} of {len(self.proposals)} proposals accepted{bonus}, so {n} "
            f"token{'' if n == 1 else 's'} committed for one pass of the target."
        )

    @property
    def every_verdict_certain(self) -> bool:
        """No check in the round needed a uniform draw: every ratio was at least 1 or the target gave 0."""
        return all(f.certain for f in self.frames if f.kind == "verify")


class _Delegates:
    """Reads any field it does not have from `self.facts`, so views keep the facts' names."""

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "facts":
            raise AttributeError(name)
        return getattr(self.facts, name)


@dataclass(frozen=True)
class ProfileView(_Delegates):
    facts: ProfileFacts
    authored: RoundView
    drawn: tuple[RoundView, ...]  # rounds a uniform draw decided: kept by the draw, rejected by the draw
    sampled: tuple[RoundView, ...]
    figures: Mapping[str, str]  # registry key -> figure name, e.g. "convergence" -> "convergence-aligned"

    @property
    def rounds(self) -> tuple[RoundView, ...]:
        return (self.authored, *self.drawn, *self.sampled)

    @property
    def frame_count(self) -> int:
        return self.authored.frame_count

    @property
    def dropped_views(self):
        """The positions the authored round dropped unchecked, with what their own check would have said."""
        dropped = {c.position for c in self.authored.frames[-1].chips if c.state == DROPPED}
        return tuple(v for v in self.facts.positions if v.position in dropped)


@dataclass(frozen=True)
class SpeedupPanelView(_Delegates):
    facts: SpeedupPanel
    figures: Mapping[str, str]


@dataclass(frozen=True)
class NotableView:
    """Each fact worth noticing as (profile, frame): the first authored frame that shows it."""

    outright: tuple[ProfileView, FrameView]  # a ratio of at least 1: accepted without a draw
    target_zero: tuple[ProfileView, FrameView]  # the target gives the proposal 0: rejected without a draw
    drops_later: tuple[ProfileView, FrameView]  # a rejection drops every later proposal
    replacement: tuple[ProfileView, FrameView]  # a rejection's replacement comes from the residual

    def items(self):
        return [(name, getattr(self, name)) for name in ("outright", "target_zero", "drops_later", "replacement")]


@dataclass(frozen=True)
class SiteView(_Delegates):
    facts: Facts
    title: str
    profiles: tuple[ProfileView, ...]
    speedup_panels: tuple[SpeedupPanelView, ...]
    notable: NotableView
    figure: Mapping[str, str]  # site-wide figures: registry key -> figure name

    @property
    def coincidences(self) -> tuple[tuple[ProfileView, ProfileView], ...]:
        """(a, b) where a's speedup and b's expected tokens per round print alike to two decimals (2.62x and
        2.62): different quantities that a reader could take for one."""
        return tuple(
            (a, b) for a in self.profiles for b in self.profiles if fixed(a.speedup) == fixed(b.expected_tokens)
        )

    def profile(self, profile_id: str) -> ProfileView:
        for p in self.profiles:
            if p.id == profile_id:
                return p
        raise KeyError(profile_id)


def _labelled(tokens, row) -> tuple[tuple[str, Fraction], ...] | None:
    return None if row is None else tuple((tokens[i], p) for i, p in enumerate(row))


def _token(tokens, index: int | None) -> str | None:
    return None if index is None else tokens[index]


# Words that name a verdict: no frame title uses one, so a title never gives away what the frame reveals.
VERDICT_WORDS = (str(ACCEPTED), str(REJECTED), "replacement", "bonus", str(DROPPED))


def frame_title(f: Frame, tokens) -> str:
    """A frame's one heading: what happens in it, never how it turns out (no VERDICT_WORDS)."""
    if f.kind == "propose":
        return "The draft proposes"
    if f.kind == "verify":
        return f"Check position {f.position}: {tokens[f.proposal]!s}"
    if f.kind == "bonus":
        return f"One more token at position {f.position}"
    return "End of the round"


def chips(f: Frame, r: Round, tokens) -> tuple[Chip, ...]:
    out = []
    for i, state in enumerate(f.statuses):
        out.append(Chip(i + 1, tokens[r.proposals[i]], "proposed" if state == PENDING else str(state)))
        if state == REJECTED:
            out.append(Chip(i + 1, tokens[f.committed[i]] if len(f.committed) > i else "?", "replacement"))
    if f.kind in ("bonus", "done") and r.bonus is not None:
        out.append(Chip(len(f.statuses) + 1, tokens[r.bonus], "bonus"))
    return tuple(out)


def frame_view(
    profile_id: str, round_id: str, number: int, f: Frame, r: Round, tokens, positions: tuple[PositionFacts, ...] = ()
) -> FrameView:
    position = next((v for v in positions if v.position == f.position), None)
    own = chips(f, r, tokens)
    before = chips(r.frames[number - 2], r, tokens) if f.kind in ("verify", "bonus") else own
    return FrameView(
        id=f"frame-{profile_id}-{round_id}-{number}",
        number=number,
        kind=f.kind,
        title=frame_title(f, tokens),
        position=f.position,
        proposal=_token(tokens, f.proposal),
        p_target=f.p_target,
        p_draft=f.p_draft,
        ratio=f.ratio,
        accept_probability=f.accept_probability,
        u=None if f.u is None else float(f.u),
        u_text=_draw_text(f.u),
        verdict=f.verdict,
        residual=_labelled(tokens, f.residual),
        replacement=_token(tokens, f.replacement),
        replacement_u_text=_draw_text(f.replacement_u),
        bonus_distribution=_labelled(tokens, f.bonus_distribution),
        bonus=_token(tokens, f.bonus),
        bonus_u_text=_draw_text(f.bonus_u),
        chips=own,
        certain=f.kind == "verify" and f.u is None,
        bars=bars(f, position, tokens),
        shown_chips=before,
    )


def round_view(
    profile_id: str, round_id: str, label: str, r: Round, tokens, positions: tuple[PositionFacts, ...] = ()
) -> RoundView:
    frames = tuple(
        frame_view(profile_id, round_id, n, f, r, tokens, positions) for n, f in enumerate(r.frames, start=1)
    )
    return RoundView(
        round_id,
        label,
        tuple(tokens[x] for x in r.proposals),
        tuple(tokens[x] for x in r.committed),
        r.accepted,
        _token(tokens, r.bonus),
        frames,
    )


def _figures_of(plan: tuple[FigureRef, ...], each: str, item_id: str | None) -> Mapping[str, str]:
    """The figures the plan draws for one site, profile or speedup panel: registry key -> figure name."""
    return MappingProxyType({ref.key: ref.name for ref in plan if ref.each == each and ref.item_id == item_id})


def profile_view(p: ProfileFacts, tokens, figures: Mapping[str, str]) -> ProfileView:
    return ProfileView(
        facts=p,
        authored=round_view(p.id, "authored", "The worked round", p.authored_round, tokens, p.positions),
        drawn=tuple(
            round_view(
                p.id,
                f"draw-{verdict}",
                "Kept by the draw" if verdict == ACCEPTED else "Rejected by the draw",
                r,
                tokens,
                p.positions,
            )
            for verdict, r in p.drawn_rounds
        ),
        sampled=tuple(
            round_view(p.id, f"sampled-{j}", f"Sampled round {j}", r, tokens, p.positions)
            for j, r in enumerate(p.sampled_rounds, start=1)
        ),
        figures=figures,
    )


def site_view(facts: Facts, title: str, plan: tuple[FigureRef, ...] = ()) -> SiteView:
    """The site as templates see it; `plan` names each figure the registry draws and what it belongs to."""
    profiles = tuple(profile_view(p, facts.tokens, _figures_of(plan, "profile", p.id)) for p in facts.profiles)
    by_id = {p.id: p for p in profiles}

    def resolve(n: Notable) -> tuple[ProfileView, FrameView]:
        p = by_id[n.profile_id]
        return p, p.authored.frames[n.frame_number - 1]

    return SiteView(
        facts=facts,
        title=title,
        profiles=profiles,
        speedup_panels=tuple(SpeedupPanelView(s, _figures_of(plan, "speedup", s.id)) for s in facts.speedup_panels),
        notable=NotableView(**{name: resolve(n) for name, n in facts.notable.items()}),
        figure=_figures_of(plan, "site", None),
    )


def first_draw(r: RoundView) -> int | None:
    """The number of the round's first frame whose verdict a uniform draw decided, or None."""
    return next((f.number for f in r.frames if f.kind == "verify" and not f.certain), None)


def offered_rounds(p: ProfileView) -> tuple[RoundView, ...]:
    """The rounds in the order the stepper offers them: the worked round first (the one the pages walk through;
    the first draft's decides a check by a draw within its first frames, requirements.OPENING_FRAMES), then the
    two sampled rounds a draw decided each way, then the other sampled rounds."""
    return p.rounds


def round_choice(r: RoundView, number: int, total: int) -> str:
    """A round as the stepper's list names it (after its label, "Round"): which of how many, and whether the draft
    sampled it, short enough for a phone: "1 of 6: worked round", "2 of 6: sampled, draw keeps"."""
    if r.id == "authored":
        return f"{number} of {total}: worked round"
    how = {"draw-accepted": ", draw keeps", "draw-rejected": ", draw rejects"}.get(r.id, "")
    return f"{number} of {total}: sampled{how}"


@dataclass(frozen=True)
class StepperProfile:
    """What the stepper shows of one profile: its name and every round, frame by frame, in the order offered
    (the worked round, `authored`, is the one the page writes out for reading without the script). Nothing
    here is priced by the cost model, so a draft-step edit leaves the stepper's HTML as it was
    (pages.KEPT_WIDGETS)."""

    id: str
    name: str
    rounds: tuple[RoundView, ...]
    authored: RoundView
    positions: tuple[PositionFacts, ...]

    @property
    def choices(self) -> tuple[str, ...]:
        """Each round offered as the round list names it ("Round 2 of 6: sampled, kept by the draw")."""
        return tuple(round_choice(r, n, len(self.rounds)) for n, r in enumerate(self.rounds, start=1))

    @property
    def rounds_note(self) -> str:
        """What "Another round" does, said plainly: it steps through a fixed set, it does not sample afresh."""
        sampled = len(self.rounds) - 1
        return (
            f"“Another round” steps through {len(self.rounds)} rounds: the worked round, then {sampled} the draft "
            f"sampled in advance, the same {sampled} on every visit, not new ones."
        )


def stepper_profiles(site: SiteView) -> tuple[StepperProfile, ...]:
    return tuple(StepperProfile(p.id, p.name, offered_rounds(p), p.authored, p.positions) for p in site.profiles)


def _fractions(row) -> list[str] | None:
    return None if row is None else [str(x) for x in row]


def _frame_data(f: FrameView) -> dict:
    """One frame as the stepper's script draws it: what shows and the strings it prints, nothing it computes."""
    out = {"id": f.id, "kind": f.kind, "title": f.title, "chips": [[c.token, c.state] for c in f.shown_chips]}
    if f.kind == "verify":
        out |= {
            "pos": f.position,
            "x": f.proposal,
            "a": str(f.accept_probability),
            "u": f.u_text or None,
            "verdict": str(f.verdict),
            "evidence": f.evidence,
            "note": f.verdict_note,
        }
        if f.verdict == REJECTED:
            out |= {"rep": f.replacement, "ru": f.replacement_u_text}
    elif f.kind == "bonus":
        out |= {"pos": f.position, "b": f.bonus, "bu": f.bonus_u_text}
    elif f.kind == "done":
        out[str(DROPPED)] = list(f.dropped)  # the tokens this verdict struck
    return out


def stepper_data(site: SiteView) -> dict:
    """The JSON the stepper's script draws every frame from: per profile, each position's p, q, min(p, q),
    max(0, p - q) and residual once (exact fractions as text), and each round's frames in the order offered."""
    return {
        "tokens": list(site.tokens),
        "profiles": [
            {
                "id": p.id,
                "name": p.name,
                "positions": [
                    {
                        "p": _fractions(v.target),
                        "q": _fractions(v.draft),
                        "min": _fractions(v.overlap),
                        "top": _fractions(v.excess),
                        "r": _fractions(v.residual),
                    }
                    for v in p.positions
                ],
                "note": p.rounds_note,
                "rounds": [
                    {
                        "id": r.id,
                        "label": r.label,
                        "choice": choice,
                        "summary": r.summary,
                        "proposals": list(r.proposals),
                        "frames": [_frame_data(f) for f in r.frames],
                    }
                    for r, choice in zip(p.rounds, p.choices)
                ],
            }
            for p in stepper_profiles(site)
        ],
    }
