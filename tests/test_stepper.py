"""The stepper as the build writes it: the worked rounds in full for reading without the script, every other
round as compact JSON the script draws from; evidence before the verdict, no heading that gives a verdict
away, a round a draw decides first, and a page light enough to lay out quickly on a phone."""

import json
import re
from fractions import Fraction
from html.parser import HTMLParser

import pytest

from generator.render.views import VERDICT_WORDS, first_draw, stepper_data, stepper_profiles
from support import ROOT, site_view

PAGE = "draft-and-verify.html"
MAX_ELEMENTS = 2000


@pytest.fixture(scope="module")
def view():
    return site_view(ROOT)


@pytest.fixture(scope="module")
def raw(site_dir):
    return (site_dir / PAGE).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data(raw):
    found = re.search(r'<script type="application/json" id="stepper-data">(.*?)</script>', raw, flags=re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def frame_html(raw: str, frame_id: str) -> str:
    start = raw.index(f'id="{frame_id}"')
    end = raw.find('<li class="frame', start + 1)
    return raw[start : end if end > 0 else len(raw)]


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.count = 0

    def handle_starttag(self, tag, attrs):
        self.count += 1

    def handle_startendtag(self, tag, attrs):
        self.count += 1


def test_the_page_holds_at_most_2000_elements(raw):
    parser = Elements()
    parser.feed(raw)
    assert 500 < parser.count <= MAX_ELEMENTS, parser.count  # was 6,795 when every round was written out


def test_the_element_count_would_catch_every_round_written_out(view):
    """Negative control: the static frames of every round, as the page once held them, exceed the limit."""
    worked = sum(p.authored.frame_count for p in view.profiles)
    every = sum(r.frame_count for p in view.profiles for r in p.rounds)
    assert every > 5 * worked  # the script's rounds are most of the frames; each static frame is ~100 elements


def test_only_the_worked_rounds_are_written_out_and_the_json_holds_every_round(view, raw, data):
    static = re.findall(r'<li class="frame[^"]*" id="([^"]+)"', raw)
    assert static == [f.id for p in view.profiles for f in p.authored.frames]
    from_json = [[f["id"] for r in p["rounds"] for f in r["frames"]] for p in data["profiles"]]
    assert [sorted(ids) for ids in from_json] == [
        sorted(f.id for r in p.rounds for f in r.frames) for p in view.profiles
    ]


def test_the_stepper_opens_on_the_first_drafts_worked_round_with_a_draw_within_three_frames(view, raw, data):
    first = stepper_profiles(view)[0]
    assert first.rounds[0] is first.authored and first.id == view.profiles[0].id
    assert first_draw(first.authored) is not None and first_draw(first.authored) <= 3
    frames = data["profiles"][0]["rounds"][0]["frames"]
    assert data["profiles"][0]["rounds"][0]["id"] == "authored"
    assert any(f["kind"] == "verify" and f["u"] for f in frames[:3])
    # the frame the page paints before the script runs is that round's first
    stage = raw[raw.index("data-stepper-stage") : raw.index("data-stepper-static")]
    assert f"Frame 1 of {first.authored.frame_count}" in text(stage)
    # without the script, the worked round's chance check is written out with its number line
    chance = first.authored.frames[first_draw(first.authored) - 1]
    html = frame_html(raw, chance.id)
    assert "data-u-line" in html and f"u = {chance.u_text}" in text(html)


def test_every_profile_offers_its_worked_round_first(view):
    for p in stepper_profiles(view):
        assert p.rounds[0] is p.authored, p.id


def test_the_negative_control_the_other_worked_round_would_not_do(view):
    """The second draft's worked round settles every check without a draw, so opening on it would fail."""
    assert first_draw(view.profiles[1].authored) is None


def test_the_round_list_says_which_rounds_are_sampled_and_how_many_there_are(view, raw, data):
    for p, offered in zip(stepper_profiles(view), data["profiles"]):
        n = len(p.rounds)
        choices = [r["choice"] for r in offered["rounds"]]
        assert choices[0] == f"1 of {n}: worked round"
        assert all(c.startswith(f"{i} of {n}: sampled") for i, c in enumerate(choices[1:], start=2))
        by_id = dict(zip((r["id"] for r in offered["rounds"]), choices))
        assert by_id["draw-accepted"].endswith("draw keeps") and by_id["draw-rejected"].endswith("draw rejects")
        assert offered["note"] == p.rounds_note and f"steps through {n} rounds" in p.rounds_note
    options = re.findall(r"<option [^>]*>([^<]+)</option>", raw)
    assert options == [r["choice"] for r in data["profiles"][0]["rounds"]]
    assert text(data["profiles"][0]["note"]) in text(raw)
    shown = text(re.sub(r"<script\b.*?</script>", " ", raw, flags=re.S))
    assert shown.count(text(data["profiles"][0]["note"])) == 1  # said once, in the widget


def test_the_page_no_longer_promises_fresh_proposals(raw):
    assert "sample fresh proposals" not in text(raw)


def test_each_thing_to_notice_links_to_a_frame_that_shows_it(view, raw):
    """Outright: a certain accept; target zero: p = 0 rejected; dropped: the frame that strikes them (the round's
    end, which prints the Dropped verdict); replacement: the frame that draws it from the residual."""
    section = raw[raw.index('id="four-things-to-notice"') :]
    links = re.findall(r'href="#(frame-[^"]+)"', section)
    assert len(links) == 4, links
    static = {f.id: f for p in view.profiles for f in p.authored.frames}
    outright, zero, dropped, replacement = (static[i] for i in links)
    assert outright.kind == "verify" and outright.certain and outright.verdict == "accepted"
    assert zero.kind == "verify" and zero.p_target == 0 and zero.verdict == "rejected"
    assert dropped.kind == "done" and dropped.dropped
    assert 'data-verdict="dropped"' in frame_html(raw, dropped.id)
    assert replacement.kind == "verify" and replacement.replacement is not None
    assert 'data-verdict="replacement"' in frame_html(raw, replacement.id)
    assert len(set(links)) >= 3  # links 2-4 once all landed on one frame


def test_no_heading_names_a_verdict(view, raw, data):
    for p in view.profiles:
        for r in p.rounds:
            for f in r.frames:
                assert not any(w in f.title.lower() for w in VERDICT_WORDS), f.title
    headings = [text(h) for h in re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", raw, flags=re.S)]
    frame_headings = [h for h in headings if h.startswith("Frame ")]
    # every worked frame, and the frame the script opens on, written where it will draw it
    assert len(frame_headings) == sum(p.authored.frame_count for p in view.profiles) + 1
    for h in frame_headings:
        assert not any(w in h.lower() for w in VERDICT_WORDS), h
    for p in data["profiles"]:
        for r in p["rounds"]:
            for f in r["frames"]:
                assert not any(w in f["title"].lower() for w in VERDICT_WORDS), f["title"]


def test_a_check_frame_shows_the_evidence_before_its_verdict(view, raw):
    for p in view.profiles:
        for f in p.authored.frames:
            html = frame_html(raw, f.id)
            if f.kind == "verify":
                assert html.index('class="pq-table"') < html.index('class="evidence"') < html.index("data-verdict")
                assert f'data-verdict="{f.verdict}"' in html
                verdict = text(html[html.index('<p class="verdict') :])
                word = "✓ Accepted:" if f.verdict == "accepted" else "✗ Rejected:"
                assert verdict.startswith(f"{word} {f.proposal} — "), verdict[:40]
            elif f.kind == "bonus":
                assert 'data-verdict="bonus"' in html and f"Bonus: {f.bonus}" in text(html)
            elif f.kind == "propose":
                assert "data-verdict" not in html


def test_every_check_frame_shows_p_and_q_for_every_token_with_the_proposal_marked(view, raw, data):
    for p in view.profiles:
        for f in p.authored.frames:
            if f.kind != "verify":
                continue
            html = frame_html(raw, f.id)
            rows = re.findall(r'<tr( class="proposal")?><th scope="row">([^<]+)', html)
            assert [t.strip() for _, t in rows] == list(view.tokens), f.id
            assert [t.strip() for marked, t in rows if marked] == [f.proposal], f.id
            assert html.count('class="bar-p"') == len(view.tokens), f.id
    for p, offered in zip(view.profiles, data["profiles"]):
        for v, at in zip(p.positions, offered["positions"]):
            assert [Fraction(x) for x in at["p"]] == list(v.target)
            if not v.is_bonus:
                assert [Fraction(x) for x in at["q"]] == list(v.draft)


def test_the_rejection_frame_shows_min_p_q_plus_the_top_up_reaching_p(view, raw, data):
    seen = 0
    for p in view.profiles:
        for r in p.rounds:
            for f in r.frames:
                if f.kind != "verify" or f.verdict != "rejected":
                    continue
                seen += 1
                for b in f.bars:
                    assert b.overlap + b.excess == b.p and b.overlap == min(b.p, b.q), (f.id, b.token)
                if r is p.authored:
                    html = frame_html(raw, f.id)
                    assert html.count('class="bar-acc"') == html.count('class="bar-res"') == len(f.exact_bars)
                    assert 'data-verdict="replacement"' in html and html.index('data-verdict="rejected"') < html.index(
                        'class="exact"'
                    ) < html.index('data-verdict="replacement"')
    for offered in data["profiles"]:
        for at in offered["positions"][:-1]:
            assert all(Fraction(a) + Fraction(b) == Fraction(c) for a, b, c in zip(at["min"], at["top"], at["p"]))
    assert seen


def test_a_check_decided_by_chance_says_where_u_fell(view, data):
    strings = {f.id: f for p in view.profiles for r in p.rounds for f in r.frames}
    chance = 0
    for p in data["profiles"]:
        for r in p["rounds"]:
            for f in r["frames"]:
                if f["kind"] != "verify":
                    continue
                frame = strings[f["id"]]
                assert (f["u"] is None) == frame.certain
                if f["u"] is not None:
                    chance += 1
                    relation = "below" if f["verdict"] == "accepted" else "not below"
                    assert f["note"] == f"u = {f['u']} is {relation} {frame.accept_probability}."
                    assert (float(f["u"]) < frame.accept_probability) == (f["verdict"] == "accepted") or abs(
                        float(f["u"]) - frame.accept_probability
                    ) < 1e-4
    assert chance


def test_no_frame_announces_what_later_frames_reveal(view, raw):
    for p in view.profiles:
        r = p.authored
        for f in r.frames[:-1]:
            said = text(frame_html(raw, f.id))
            assert not re.search(r"\d+ of \d+ (proposals )?accepted", said), f.id
            assert "round is over" not in said, f.id
        assert f"{r.accepted} of {len(r.proposals)} proposals accepted" in text(frame_html(raw, r.frames[-1].id))


def test_the_authored_rounds_keep_eight_and_five_frames(view):
    assert [p.authored.frame_count for p in view.profiles] == [8, 5]


def test_each_profile_offers_a_round_kept_by_the_draw_and_one_rejected_by_it(view, data):
    for p, offered in zip(view.profiles, data["profiles"]):
        named = {r.id: r for r in p.drawn}
        assert set(named) == {"draw-accepted", "draw-rejected"}, p.id
        kept = [f for f in named["draw-accepted"].frames if f.kind == "verify" and not f.certain]
        assert kept and all(f.verdict == "accepted" for f in kept), p.id
        assert all(f.u < f.accept_probability for f in kept)
        rejected = [f for f in named["draw-rejected"].frames if f.kind == "verify" and not f.certain]
        assert any(f.verdict == "rejected" and f.u >= f.accept_probability for f in rejected), p.id
        labels = {r["id"]: r["label"] for r in offered["rounds"]}
        assert labels["draw-accepted"] == "Kept by the draw" and labels["draw-rejected"] == "Rejected by the draw"


def test_the_json_is_compact(data, view):
    size = len(json.dumps(stepper_data(view), separators=(",", ":")))
    assert size < 60_000, size  # every round's frames, without markup
