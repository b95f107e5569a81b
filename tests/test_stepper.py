"""The stepper shows the decision, not just the verdict: p and q over every token in each check frame, the
residual where it is used, no frame that gives away what later frames reveal, and named rounds a draw decided."""
import re
from fractions import Fraction

import pytest

from support import ROOT, site_view

PAGE = "draft-and-verify.html"


@pytest.fixture(scope="module")
def view():
    return site_view(ROOT)


@pytest.fixture(scope="module")
def raw(site_dir):
    return (site_dir / PAGE).read_text(encoding="utf-8")


def frame_html(raw: str, frame_id: str) -> str:
    start = raw.index(f'id="{frame_id}"')
    end = raw.find('<li class="frame', start + 1)
    return raw[start: end if end > 0 else len(raw)]


def test_every_check_frame_shows_p_and_q_for_every_token_with_the_proposal_marked(view, raw):
    seen = 0
    for p in view.profiles:
        for r in p.rounds:
            for f in r.frames:
                html = frame_html(raw, f.id)
                if f.kind != "verify":
                    assert "pq-table" not in html, f.id
                    continue
                seen += 1
                rows = re.findall(r'<tr( class="proposal")?>\s*<th scope="row">([^<]+)', html.split("pq-table", 1)[1])
                assert [t.strip() for _, t in rows[: len(view.tokens)]] == list(view.tokens), f.id
                assert [t.strip() for marked, t in rows if marked] == [f.proposal], f.id
                position = p.position(f.position)
                for b, t, q in zip(f.bars, position.target, position.draft):
                    assert (b.p, b.q) == (t, q)
                assert html.count('class="m-p"') == html.count('class="m-q"') == len(view.tokens), f.id
    assert seen > 0


def test_the_residual_shows_in_the_frame_that_uses_it_and_only_there(view, raw):
    for p in view.profiles:
        for r in p.rounds:
            for f in r.frames:
                html = frame_html(raw, f.id)
                if f.kind == "verify" and f.verdict == "rejected":
                    assert html.count('class="m-r"') == len(view.tokens), f.id
                    shares = [b.residual for b in f.bars]
                    assert sum(shares, Fraction(0)) == 1 and shares[view.tokens.index(f.proposal)] == 0, f.id
                else:
                    assert 'class="m-r"' not in html, f.id


def test_no_frame_and_no_heading_announces_what_later_frames_reveal(view, raw):
    for p in view.profiles:
        for r in p.rounds:
            at = raw.index(f'id="rounds-{p.id}-{r.id}"')
            section = raw[raw.index(">", at) + 1:]
            before_frames = re.sub(r"<[^>]+>", " ", section[: section.index('<ol class="frames"')])
            assert "accepted" not in before_frames and "committed" not in before_frames, (p.id, r.id)
            for f in r.frames[:-1]:
                text = re.sub(r"<[^>]+>", " ", frame_html(raw, f.id))
                assert not re.search(r"\d+ of \d+ (proposals )?accepted", text), f.id
                assert "round is over" not in text, f.id
            assert re.search(rf"{r.accepted} of {len(r.proposals)} proposals accepted",
                             re.sub(r"<[^>]+>", " ", frame_html(raw, r.frames[-1].id))), (p.id, r.id)


def test_the_authored_rounds_keep_eight_and_five_frames(view):
    assert [p.authored.frame_count for p in view.profiles] == [8, 5]


def test_each_profile_offers_a_round_kept_by_the_draw_and_one_rejected_by_it(view, raw):
    for p in view.profiles:
        named = {r.id: r for r in p.drawn}
        assert set(named) == {"draw-accepted", "draw-rejected"}, p.id
        kept = [f for f in named["draw-accepted"].frames if f.kind == "verify" and not f.certain]
        assert kept and all(f.verdict == "accepted" for f in kept), p.id
        assert all(f.u < f.accept_probability for f in kept)
        rejected = [f for f in named["draw-rejected"].frames if f.kind == "verify" and not f.certain]
        assert any(f.verdict == "rejected" and f.u >= f.accept_probability for f in rejected), p.id
        for r in named.values():
            assert f'id="rounds-{p.id}-{r.id}"' in raw and r.label in raw
