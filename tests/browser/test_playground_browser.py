"""The playground page in Debian's Chromium, driven as a reader would: mouse, keyboard, screen reader.

The real site is built once for the module (the build cache makes that cheap) and served from a
local http.server; one browser serves every test. Each test gets a fresh page that records console
errors and warnings and every URL it asks for, and fails if the page logged anything or reached
outside the local origin. The page's CSP forbids eval, so waiting is done with Playwright's
`expect` (which polls from Python) rather than wait_for_function.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from browser_support import require_chromium, serve

ROOT = Path(__file__).resolve().parents[2]
PAGE_BUDGET = 1_500_000  # bytes: HTML (with the embedded model JSON) + CSS + JS, uncompressed
FROM_VISIBLE = {"\u2423": " ", "\u21b5": "\n", "\u21e5": "\t"}  # playground.js shows these for blanks

pytestmark = pytest.mark.browser

sync_api = require_chromium()
expect = sync_api.expect


@pytest.fixture(scope="module")
def origin(site_dir):
    assert (site_dir / "playground.html").is_file()
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="module")
def generate_chars():
    """What one press of Generate adds at least: the site's own setting."""
    from generator.config import load_config

    return load_config(ROOT / "data" / "site.yaml").playground.generate_chars


@pytest.fixture
def page(browser, origin):
    """A fresh page that records console noise, every URL it asks for and every response."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(5000)
    pg = context.new_page()
    pg.problems, pg.requested, pg.responses = [], [], []
    pg.on("console", lambda m: m.type in ("error", "warning") and pg.problems.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: pg.problems.append(f"pageerror: {e}"))
    pg.on("request", lambda r: pg.requested.append(r.url))
    pg.on("response", lambda r: pg.responses.append(r))
    yield pg
    context.close()
    assert not pg.problems, pg.problems
    outside = [u for u in pg.requested if not (u.startswith(origin + "/") or u.startswith("data:"))]
    assert not outside, outside


# --- reading the widget --------------------------------------------------------------------------

def open_playground(pg, origin):
    pg.goto(f"{origin}/playground.html")
    expect(pg.locator(".pg-widget")).to_be_visible()
    expect(pg.locator("#pg-stats dt").first).to_be_visible()  # init() ran to its final reset()


def stats(pg) -> dict[str, str]:
    """The running counts, keyed by the start of each <dt> ("Speedup (round cost ...)" -> "Speedup")."""
    dts = pg.locator("#pg-stats dt").all_inner_texts()
    dds = pg.locator("#pg-stats dd").all_inner_texts()
    assert len(dts) == len(dds) == 5, (dts, dds)
    return {re.match(r"[A-Za-z ]+?(?= \(|$)", dt).group(0): dd for dt, dd in zip(dts, dds)}


def output_parts(pg) -> tuple[str, str]:
    """(prompt, generated) exactly as the output box holds them."""
    return (pg.locator("#pg-output .pg-prompt-text").text_content(),
            pg.locator("#pg-output .pg-generated").text_content())


def rounds(pg) -> list[dict]:
    """Every round in the list: its label, drafted text, chips (kind, shown text) and committed count."""
    return pg.eval_on_selector_all("#pg-rounds > li", """items => items.map(li => ({
        label: li.querySelector('.pg-round-label').textContent,
        drafted: li.querySelector('.pg-drafted code').textContent,
        chips: [...li.querySelectorAll('.pg-chip')].map(c => ({
            kind: c.className.replace('pg-chip ', '').replace('pg-chip-', ''),
            text: c.querySelector('.pg-chip-text').textContent,
            spoken: c.querySelector('.visually-hidden').textContent,
        })),
        committed: li.lastElementChild.textContent,
    }))""")


def unvisible(text: str) -> str:
    return "".join(FROM_VISIBLE.get(ch, ch) for ch in text)


def check_round(r: dict, number: int, k: int) -> str:
    """Assert the chips of one round follow the rule; return the characters it committed."""
    assert r["label"] == f"Round {number}"
    kinds = [c["kind"] for c in r["chips"]]
    drafted = [c["text"] for c in r["chips"] if c["kind"] != "bonus"]
    if "rejected" in kinds:
        j = kinds.index("rejected")
        # j accepted, one rejected -> replacement, the rest of the K drafted characters dropped, no bonus
        assert kinds == ["accepted"] * j + ["rejected"] + ["dropped"] * (k - j - 1), kinds
        shown, replacement = r["chips"][j]["text"].split("\u2192")
        drafted[j] = shown
        committed = "".join(c["text"] for c in r["chips"][:j]) + replacement
    else:
        # all K accepted and the target adds a bonus character
        assert kinds == ["accepted"] * k + ["bonus"], kinds
        committed = "".join(c["text"] for c in r["chips"])
    assert "".join(drafted) == r["drafted"], (drafted, r["drafted"])
    assert all(c["spoken"].startswith(c["kind"].replace("dropped", "dropped unverified")) for c in r["chips"]), r
    committed = unvisible(committed)
    assert r["committed"].strip() == f"{len(committed)} committed", r["committed"]
    return committed


def check_counts(pg, prompt: str, generated: str, k: int) -> dict:
    """The running counts agree with the output, with the chips and with the round cost they name."""
    s = stats(pg)
    label = pg.locator("#pg-stats dt").last.inner_text()
    named = re.fullmatch(r"Speedup \(round cost (\d+) \u00d7 ([\d.]+) \+ ([\d.]+)\)", label)
    assert named and int(named.group(1)) == k, label
    cost = (float(named.group(2)), float(named.group(3)))
    n = int(s["Rounds"])
    committed = int(s["Characters committed"])
    per_round = float(s["Characters per round"])
    acceptance = float(s["Acceptance rate"].rstrip("%"))
    speedup = float(s["Speedup"].rstrip("\u00d7"))
    assert n == len(rounds(pg))
    assert committed == len(prompt + generated) - len(prompt) == len(generated)
    assert n > 0 and abs(per_round - committed / n) <= 0.005 + 1e-9, s
    chips = [c["kind"] for r in rounds(pg) for c in r["chips"]]
    verified = chips.count("accepted") + chips.count("rejected")
    assert abs(acceptance - 100 * chips.count("accepted") / verified) <= 0.05 + 1e-9, s
    assert 0 <= acceptance <= 100
    assert abs(speedup - (committed / n) / (k * cost[0] + cost[1])) <= 0.005 + 1e-9, s
    return s


def k_value(pg) -> int:
    return int(pg.input_value("#pg-k"))


def focused(pg) -> str:
    """The focused control: its id, or name=value for the mode radios, or a button's text."""
    return pg.evaluate("""() => {
        const e = document.activeElement;
        if (!e) return "";
        if (e.id) return e.id;
        if (e.type === "radio") return `${e.name}=${e.value}`;
        return e.textContent.trim();
    }""")


def tab_to(pg, target: str, key: str = "Tab", limit: int = 12) -> list[str]:
    """Press Tab (or Shift+Tab) until target (see focused) has focus; return the controls passed through."""
    path = []
    for _ in range(limit):
        pg.keyboard.press(key)
        path.append(focused(pg))
        if path[-1] == target:
            return path
    raise AssertionError(f"{key} never reached {target}: {path}")


# --- the tests -----------------------------------------------------------------------------------

def test_script_shows_the_widget_and_hides_the_no_script_note(page, origin):
    open_playground(page, origin)
    expect(page.locator(".pg-nojs")).to_be_hidden()
    expect(page.locator("#pg-k-value")).to_have_text(str(k_value(page)))
    expect(page.locator("#pg-temperature-value")).to_have_text("1.0")
    prompt, generated = output_parts(page)
    assert prompt == page.input_value("#pg-prompt") and generated == ""
    assert stats(page)["Rounds"] == "0"
    assert page.locator("#pg-rounds > li").count() == 0


def test_without_script_only_the_note_shows(browser, origin):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    try:
        pg.goto(f"{origin}/playground.html")
        expect(pg.locator(".pg-nojs")).to_be_visible()
        expect(pg.locator(".pg-widget")).to_be_hidden()
        expect(pg.locator("#playground-prose")).to_be_visible()  # the measured tables need no script
    finally:
        context.close()


def test_generate_in_sampling_mode_writes_text_and_consistent_counts(page, origin, generate_chars):
    open_playground(page, origin)
    prompt = page.input_value("#pg-prompt")
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    expect(page.locator("#pg-live")).to_have_text(re.compile(r"^\d+ rounds? run; "))
    shown_prompt, generated = output_parts(page)
    assert shown_prompt == prompt
    assert len(shown_prompt + generated) > len(prompt)
    assert len(generated) >= generate_chars
    k = k_value(page)
    s = check_counts(page, prompt, generated, k)
    assert int(s["Rounds"]) > 0
    # every round obeys the rule and the rounds' committed characters are the generated text, in order
    all_rounds = rounds(page)
    assert "".join(check_round(r, n, k) for n, r in enumerate(all_rounds, 1)) == generated
    kinds = {c["kind"] for r in all_rounds for c in r["chips"]}
    assert {"accepted", "rejected"} <= kinds, kinds  # a weak draft over 120+ characters meets both
    # the live region repeats the counts shown
    live = page.locator("#pg-live").inner_text()
    assert live.startswith(f"{s['Rounds']} rounds run; {s['Characters per round']} characters per round, "
                           f"acceptance {s['Acceptance rate']}, speedup {s['Speedup'].rstrip(chr(0xd7))} times."), live
    # a second press continues the same text rather than starting over
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li")).not_to_have_count(len(all_rounds))
    _, more = output_parts(page)
    assert more.startswith(generated) and len(more) >= len(generated) + generate_chars
    check_counts(page, prompt, more, k)


def test_the_same_seed_gives_the_same_text_and_another_seed_another(page, origin):
    open_playground(page, origin)
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    first = output_parts(page)[1]
    page.click("#pg-reset")
    expect(page.locator("#pg-rounds > li")).to_have_count(0)
    expect(page.locator("#pg-output .pg-generated")).to_have_text("")
    expect(page.locator("#pg-live")).to_have_text("Output cleared.")
    assert stats(page)["Rounds"] == "0"
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    assert output_parts(page)[1] == first
    page.fill("#pg-seed", "7")
    page.press("#pg-seed", "Tab")  # the change event resets the output
    expect(page.locator("#pg-rounds > li")).to_have_count(0)
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    assert output_parts(page)[1] != first


def test_step_runs_exactly_one_round_per_press_and_shows_its_chips(page, origin):
    open_playground(page, origin)
    prompt = page.input_value("#pg-prompt")
    k = k_value(page)
    text = ""
    for n in range(1, 9):
        page.click("#pg-step")
        expect(page.locator("#pg-rounds > li")).to_have_count(n)
        expect(page.locator("#pg-live")).to_have_text(re.compile(r"^1 round run; "))
        assert stats(page)["Rounds"] == str(n)
        r = rounds(page)[-1]
        committed = check_round(r, n, k)
        _, generated = output_parts(page)
        assert generated == text + committed, (generated, text, committed)
        text = generated
        check_counts(page, prompt, generated, k)


def test_greedy_mode_matches_the_target_alone_character_for_character(page, origin, generate_chars):
    open_playground(page, origin)
    page.get_by_label("Greedy (temperature 0)").check()
    expect(page.locator("#pg-live")).to_have_text("Mode: greedy. Output cleared.")
    expect(page.locator("#pg-temperature")).to_be_disabled()
    prompt = page.input_value("#pg-prompt")
    page.click("#pg-generate")
    verdict = page.locator("#pg-greedy .pg-verdict-ok")
    expect(verdict).to_have_text("\u2713 Identical, character for character.")
    expect(page.locator("#pg-greedy .pg-verdict-bad")).to_have_count(0)
    speculative, alone = page.locator("#pg-greedy pre.pg-sample").all_text_contents()
    assert speculative == alone, (speculative, alone)
    shown_prompt, generated = output_parts(page)
    assert speculative == shown_prompt + generated and shown_prompt == prompt
    assert len(generated) >= generate_chars
    check_counts(page, prompt, generated, k_value(page))
    expect(page.locator("#pg-live")).to_contain_text("Greedy output is identical to the target alone.")
    # greedy is deterministic: stepping on keeps agreeing with the target alone
    page.click("#pg-step")
    expect(page.locator("#pg-rounds > li")).to_have_count(int(stats(page)["Rounds"]))
    speculative, alone = page.locator("#pg-greedy pre.pg-sample").all_text_contents()
    assert speculative == alone and len(speculative) > len(prompt + generated)
    # back to sampling: the temperature slider is live again and the output is cleared
    page.get_by_label("Sampling").check()
    expect(page.locator("#pg-temperature")).to_be_enabled()
    expect(page.locator("#pg-greedy")).to_be_empty()


def run_check(pg, draws: int) -> tuple[float, list[list[float]]]:
    """Press "Check the distribution" with this many draws: (reported TV, table rows of frequencies)."""
    pg.fill("#pg-samples", str(draws))
    pg.click("#pg-check")
    summary = pg.locator("#pg-check-result > p").first
    expect(summary).to_have_text(re.compile(rf"^Total variation distance between the two histograms: "
                                            rf"\d\.\d{{3}} over {draws} draws each( \(greedy: .*\))?\.$"))
    expect(pg.locator("#pg-live")).to_have_text(summary.inner_text())
    tvd = float(re.search(r"(\d\.\d{3})", summary.inner_text()).group(1))
    rows = pg.eval_on_selector_all("#pg-check-result tbody tr",
                                   "rs => rs.map(r => [...r.querySelectorAll('td')].map(td => Number(td.textContent)))")
    return tvd, rows


# A typed prompt whose next character the target spreads over a handful of characters
# ('.', ')' and ',' hold about 95%), so that 1000 draws pin the histograms down well.
CHECK_PROMPT = "def __init__(self"


def test_the_distribution_check_reports_a_small_total_variation_distance(page, origin):
    open_playground(page, origin)
    page.fill("#pg-prompt", CHECK_PROMPT)
    tvd, rows = run_check(page, 1000)
    expect(page.locator("#pg-check-result svg.pg-chart")).to_be_visible()
    # The table: the top ten characters plus "other"; each column is a distribution.
    assert 2 <= len(rows) <= 11
    for column in range(3):
        assert abs(sum(r[column] for r in rows) - 1) <= 0.0005 * len(rows) + 1e-9, column
    exact = sorted((r[2] for r in rows[:-1]), reverse=True)
    assert sum(exact[:4]) >= 0.9, exact  # the premise of the bound below: a handful of likely characters
    # Both histograms are 1000 draws from the same next-character distribution (that is the theorem
    # the page demonstrates), so their TV distance is sampling noise alone. Each frequency is off
    # by about sqrt(2 p (1 - p) / 1000), and with the mass on m ~ 3-4 likely characters the expected
    # TV is about sqrt(m / (pi * 1000)) ~ 0.03: a few hundredths. A sampler that let the draft's
    # distribution leak through would show 0.1 or more (the greedy-mode check below is off by 0.4).
    assert 0 <= tvd < 0.1, tvd
    # Summing over the table's coarser rows can only hide differences.
    assert sum(abs(r[0] - r[1]) for r in rows) / 2 <= tvd + 0.0005 * len(rows)
    # Twenty times the draws: the noise shrinks by sqrt(20), to under a hundredth.
    tvd, _ = run_check(page, 20000)
    assert tvd < 0.03, tvd


def test_the_distribution_check_in_greedy_mode_agrees_with_its_own_caption(page, origin):
    open_playground(page, origin)
    page.fill("#pg-prompt", CHECK_PROMPT)
    page.get_by_label("Greedy (temperature 0)").check()
    tvd, rows = run_check(page, 1000)
    expect(page.locator("#pg-check-result > p").first).to_contain_text("both always give the target's top character")
    assert rows[0] == [1.0, 1.0, 1.0], rows  # every draw, both ways, is the top character
    assert tvd == 0.0, tvd


def test_moving_the_k_slider_does_not_change_the_counts_of_rounds_already_run(page, origin):
    open_playground(page, origin)
    page.click("#pg-generate")
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    before = stats(page)
    page.focus("#pg-k")
    page.keyboard.press("ArrowRight" if k_value(page) < 8 else "ArrowLeft")
    expect(page.locator("#pg-k-value")).to_have_text(str(k_value(page)))
    after = stats(page)
    # either the output starts over (as it does for a new mode, seed or prompt) or the counts stand
    assert after["Rounds"] == "0" or after == before, (before, after)


def test_the_widget_works_from_the_keyboard_alone(page, origin):
    open_playground(page, origin)
    page.focus("#pg-prompt")
    path = tab_to(page, "pg-k")
    examples = page.locator(".pg-examples button").count()
    assert len(path) == examples + 1, path  # through every example prompt, then the K slider
    before = k_value(page)
    key, after = ("ArrowRight", before + 1) if before < 8 else ("ArrowLeft", before - 1)
    page.keyboard.press(key)
    expect(page.locator("#pg-k")).to_have_value(str(after))
    expect(page.locator("#pg-k-value")).to_have_text(str(after))
    assert tab_to(page, "pg-generate") == ["pg-temperature", "pg-mode=sampling", "pg-seed", "pg-generate"]
    page.keyboard.press("Enter")
    live = page.locator("#pg-live")
    expect(live).to_have_text(re.compile(r"^\d+ rounds run; "))
    expect(page.locator("#pg-rounds > li").first).to_be_visible()
    prompt, generated = output_parts(page)
    check_counts(page, prompt, generated, after)
    # back to the mode radios (Shift+Tab over the seed), and arrow to Greedy
    assert tab_to(page, "pg-mode=sampling", key="Shift+Tab", limit=2) == ["pg-seed", "pg-mode=sampling"]
    page.keyboard.press("ArrowDown")
    expect(page.get_by_label("Greedy (temperature 0)")).to_be_checked()
    expect(page.get_by_label("Greedy (temperature 0)")).to_be_focused()
    expect(live).to_have_text("Mode: greedy. Output cleared.")
    expect(page.locator("#pg-rounds > li")).to_have_count(0)
    assert tab_to(page, "pg-generate") == ["pg-seed", "pg-generate"]
    page.keyboard.press("Space")
    expect(page.locator("#pg-greedy .pg-verdict-ok")).to_be_visible()
    expect(live).to_contain_text("Greedy output is identical to the target alone.")
    # Step with the keyboard: one round more
    count = page.locator("#pg-rounds > li").count()
    assert tab_to(page, "pg-step") == ["pg-step"]
    page.keyboard.press("Enter")
    expect(page.locator("#pg-rounds > li")).to_have_count(count + 1)
    expect(live).to_have_text(re.compile(r"^1 round run; .*identical"))
    # and the arrows go back to Sampling
    # Shift+Tab from Step passes Generate and the seed, and lands on the checked radio; the
    # temperature slider is disabled in greedy mode, so it is not in the way going forwards either
    assert tab_to(page, "pg-mode=greedy", key="Shift+Tab", limit=3) == ["pg-generate", "pg-seed", "pg-mode=greedy"]
    page.keyboard.press("ArrowUp")
    expect(page.get_by_label("Sampling")).to_be_checked()
    expect(live).to_have_text("Mode: sampling. Output cleared.")


def test_example_prompt_buttons_set_the_prompt(page, origin):
    open_playground(page, origin)
    buttons = page.locator(".pg-examples button")
    assert buttons.count() >= 2
    kinds = set()
    for i in range(buttons.count()):
        button = buttons.nth(i)
        wanted, kind = button.get_attribute("data-prompt"), button.get_attribute("data-kind")
        kinds.add(kind)
        button.click()
        expect(page.locator("#pg-prompt")).to_have_value(wanted)
        expect(page.locator("#pg-prompt")).to_be_focused()
        expect(page.locator("#pg-live")).to_have_text(f"Prompt set to an example {kind} prompt.")
        assert output_parts(page) == (wanted, "")
    assert kinds == {"prose", "code"}
    # the last example is the one generation continues
    page.click("#pg-step")
    expect(page.locator("#pg-rounds > li")).to_have_count(1)
    assert output_parts(page)[0] == wanted


def test_the_page_stays_local_and_light(page, origin):
    open_playground(page, origin)
    page.wait_for_load_state("networkidle")
    page.click("#pg-generate")
    page.click("#pg-check")
    expect(page.locator("#pg-check-result > p").first).to_be_visible()
    # the fixture checks the console and the origin of every request; here, the bytes
    sizes = {}
    for response in page.responses:
        if response.url.startswith("data:"):
            continue
        assert response.status == 200, (response.url, response.status)
        sizes[response.url.removeprefix(origin)] = len(response.body())
    assert "/playground.html" in sizes and "/assets/playground.js" in sizes and "/assets/playground-core.js" in sizes
    assert sum(sizes.values()) < PAGE_BUDGET, sizes
