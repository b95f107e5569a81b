"""The what-if editor in Debian's chromium, on the real site: every readout it shows after an edit must
equal what `python -m generator numbers --data FILE --json` prints for the state in its own URL fragment,
print the decimal the pages print for the same number, and the reader must never be stuck: an invalid row
keeps the last results (dimmed) with one sentence and a Rebalance button, a malformed address throws nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction
from urllib.parse import quote, unquote

import pytest

from browser_support import shared_tab, turn
from generator.model import analysis
from generator.model.profiles import load_profiles
from generator.render import decimals
from generator.render.whatif import parity_vectors
from support import PROFILES, ROOT

pytestmark = pytest.mark.browser

PREFIX = "#what-if="


@pytest.fixture(scope="module")
def tab(browser, origin):
    """The module's one tab (browser_support.shared_tab), recording console noise."""
    with shared_tab(browser, timeout_ms=10000) as pg:  # generous: the machine may be busy with other builds
        pg.origin = origin
        yield pg


@pytest.fixture
def page(tab):
    turn(tab)
    pg = tab
    yield pg
    assert not pg.problems, pg.problems


def open_editor(page, fragment: str = ""):
    page.goto(f"{page.origin}/what-if.html{fragment}")
    page.wait_for_selector("#what-if.is-enhanced")
    return page


def open_reference(page, fragment: str = ""):
    """The appendix page with the per-position tables (the positions widget, tabbed by draft)."""
    page.goto(f"{page.origin}/positions-reference.html{fragment}")
    return page


def wait_until(page, predicate: str, timeout_s: float = 20.0) -> None:
    """Poll a predicate through evaluate: the page's CSP forbids the eval that wait_for_function needs.
    Generous, because a machine running other test processes beside this one can be slow to repaint."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(predicate):
        if time.monotonic() > deadline:
            pytest.fail(f"never true within {timeout_s:g} s: {predicate}")
        page.wait_for_timeout(50)


def fragment_of(doc: dict) -> str:
    return PREFIX + quote(json.dumps(doc), safe="")


def current_state(page) -> dict:
    """The editor's state as the address carries it, once the address carries one (a busy machine may
    run the click's handler a moment after Playwright returns)."""
    wait_until(page, f"location.hash.startsWith({json.dumps(PREFIX)})")
    hash_ = page.evaluate("location.hash")
    assert hash_.startswith(PREFIX), hash_
    return json.loads(unquote(hash_[len(PREFIX) :]))


def shipped_state() -> dict:
    profiles = load_profiles(PROFILES)
    draft = profiles.drafts[0]
    return {
        "target": [[str(p) for p in row] for row in profiles.target],
        "draft": [[str(p) for p in row] for row in draft.distributions],
        "proposals": [profiles.tokens[i] for i in draft.proposals],
        "cost_model": {
            "draft_step": str(profiles.cost_model.draft_step),
            "verify_step": str(profiles.cost_model.verify_step),
        },
    }


def engine_numbers(state: dict, tmp_path) -> dict:
    """The state as a profiles file (its first K positions), through the `numbers` command."""
    tokens = state.get("tokens") or list(load_profiles(PROFILES).tokens)
    k = state.get("k", len(state["draft"]))
    doc = {
        "version": 1,
        "tokens": tokens,
        "cost_model": state["cost_model"],
        "target": state["target"][: k + 1],
        "drafts": [
            {
                "id": "what-if",
                "name": "What if",
                "description": "From the editor.",
                "distributions": state["draft"][:k],
                "proposals": state["proposals"][:k],
            }
        ],
    }
    path = tmp_path / "what-if.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "generator", "numbers", "--data", str(path), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["profiles"][0]


def readouts(page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#what-if [data-readout]')]
        .map(e => [e.dataset.readout, e.dataset.exact]))""")


def assert_matches_engine(page, tmp_path, state: dict | None = None) -> dict:
    state = state or current_state(page)
    want = engine_numbers(state, tmp_path)
    got = readouts(page)
    k = len(want["accept_rates"])
    assert [got[f"accept-rate-{i}"] for i in range(1, k + 1)] == want["accept_rates"]
    assert f"accept-rate-{k + 1}" not in got
    assert [got[f"p-n-{n}"] for n in range(1, k + 2)] == want["round_length_distribution"]
    assert got["expected-tokens"] == want["expected_tokens"]
    assert got["speedup"] == want["speedup"]
    assert got["block-expected-tokens"] == want["block_expected_tokens"]  # block verification, beside it
    return got


def error_text(page) -> str:
    box = page.locator('[data-wi="error"]')
    return box.text_content() if box.is_visible() else ""


def cell(page, which: str, token: str):
    label = "Target p" if which == "target" else "Draft q"
    return page.locator(f'#what-if input.wi-cell[data-which="{which}"][aria-label^="{label} of {token} "]')


def test_the_editor_starts_from_the_first_shipped_profile_with_the_engines_numbers(page, tmp_path):
    open_editor(page)
    got = assert_matches_engine(page, tmp_path, shipped_state())
    cli = subprocess.run(
        [sys.executable, "-m", "generator", "numbers", "--json"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    first = json.loads(cli.stdout)["profiles"][0]
    assert got["expected-tokens"] == first["expected_tokens"] and got["speedup"] == first["speedup"]
    assert page.evaluate("location.hash") == "", "merely opening the page must not rewrite its address"


def test_the_other_shipped_profile_can_be_picked(page, tmp_path):
    open_editor(page)
    page.select_option("#wi-profile", "divergent")
    state = current_state(page)
    profiles = load_profiles(PROFILES)
    assert state["proposals"] == [profiles.tokens[i] for i in profiles.draft("divergent").proposals]
    assert_matches_engine(page, tmp_path)


def is_stale(page) -> bool:
    """The results are dimmed: marked stale, the speedup in the muted grey of small print, the bars grey."""
    return page.evaluate("""() => {
        const results = document.querySelector('#what-if [data-wi="results"]');
        const muted = getComputedStyle(document.querySelector('#what-if .wi-small')).color;
        const speedup = getComputedStyle(results.querySelector('[data-readout="speedup"]')).color;
        const bar = getComputedStyle(results.querySelector('.wi-fill')).backgroundColor;
        const stale = results.classList.contains('is-stale');
        if (stale !== (speedup === muted) || stale !== (bar === muted))
            throw new Error(`marked ${stale}, drawn ${speedup} ${bar}`);
        return stale;
    }""")


def fix_button(page):
    return page.locator('#what-if [data-wi="fix"]')


def test_editing_cells_keeps_the_last_valid_state_until_the_row_sums_to_one(page, tmp_path):
    open_editor(page)
    page.click('[data-position="1"]')  # position 2
    # a busy machine may run the click's handler after Playwright returns: filling a cell before it ran
    # edits position 1 instead (its row then sums to 1/2)
    wait_until(page, "() => document.querySelector('[data-position=\"1\"]').getAttribute('aria-pressed') === 'true'")
    before = readouts(page)
    assert not is_stale(page)
    cell(page, "target", "the").fill("0")
    assert error_text(page).startswith(
        "The results below are for the last valid numbers, because target row 2 sums to 7/8, not 1."
    )
    assert readouts(page) == before, "an invalid row must not change the results"
    assert is_stale(page), "the last valid results stay visible, dimmed"
    assert page.locator('#what-if [data-readout="speedup"]').is_visible()
    assert fix_button(page).is_visible() and fix_button(page).text_content() == "Rebalance: give 1/8 to cat"
    cell(page, "target", "cat").fill("5/8")
    assert error_text(page) == ""
    assert not is_stale(page) and not fix_button(page).is_visible()
    picture = page.locator('#what-if [data-wi="position-picture"] svg').get_attribute("aria-label")
    assert (
        picture.startswith("Position 2: target p and draft q by token")
        and "the: p 0, q 1/4; cat: p 5/8, q 3/8" in picture
    )
    state = current_state(page)
    assert state["target"][1][:2] == ["0", "5/8"]
    got = assert_matches_engine(page, tmp_path)
    assert got["accept-rate-2"] != before["accept-rate-2"]


def test_moving_probability_between_tokens_keeps_the_row_summing_to_one(page, tmp_path):
    open_editor(page)
    page.select_option("#wi-step", "1/16")
    page.select_option("#wi-move-row", "draft")
    page.select_option("#wi-move-from", "0")  # the
    page.select_option("#wi-move-to", "5")  # mat
    page.click('[data-wi="move"]')
    state = current_state(page)
    assert state["draft"][0][0] == "5/16" and state["draft"][0][5] == "3/16"
    assert sum(Fraction(x) for x in state["draft"][0]) == 1
    assert "Moved 1/16 from the to mat" in page.locator('[data-wi="move-status"]').text_content()
    assert_matches_engine(page, tmp_path)
    for _ in range(6):  # 5/16 left on "the": five more moves, then it refuses
        page.click('[data-wi="move"]')
    wait_until(
        page, "() => document.querySelector('[data-wi=\"move-status\"]').textContent.includes('less than the step')"
    )
    assert cell(page, "draft", "the").input_value() == "0"
    assert "proposal 1, \u201cthe\u201d, has probability 0 in draft row 1" in error_text(page)
    assert current_state(page)["draft"][0][0] == "1/16", "the address keeps the last valid state"


def test_changing_k_and_the_draft_step_recomputes_from_the_first_k_positions(page, tmp_path):
    open_editor(page)
    page.select_option("#wi-k", "3")
    page.fill("#wi-draft-step", "1/5")
    state = current_state(page)
    assert state["k"] == 3 and state["cost_model"]["draft_step"] == "1/5"
    got = assert_matches_engine(page, tmp_path)
    assert {k for k in got if k.startswith("p-n-")} == {"p-n-1", "p-n-2", "p-n-3", "p-n-4"}
    page.fill("#wi-draft-step", "-1/5")
    assert "the draft step c is negative" in error_text(page)
    assert readouts(page) == got
    assert is_stale(page) and not fix_button(page).is_visible(), "a cost is not fixed by rebalancing a row"
    page.fill("#wi-draft-step", "0.2")
    assert error_text(page) == "" and current_state(page)["cost_model"]["draft_step"] == "1/5"


def test_a_what_if_link_restores_a_random_profile_with_any_denominators(page, tmp_path):
    vectors = parity_vectors(load_profiles(PROFILES), 16)
    case = next(c for c in vectors["cases"] if len(c["state"]["draft"]) == 7 and len(c["state"]["tokens"]) == 4)
    open_editor(page, fragment_of(case["state"]))
    assert error_text(page) == ""
    assert page.locator("#what-if tbody tr").count() == 4
    got = assert_matches_engine(page, tmp_path, case["state"])
    assert got["speedup"] == case["numbers"]["speedup"]
    assert page.locator("[data-position]").count() == 8  # seven positions and the bonus row
    assert page.locator("#wi-profile option:checked").text_content() == "The numbers in the link"
    page.select_option("#wi-profile", "aligned")
    assert_matches_engine(page, tmp_path, shipped_state())


def test_following_a_second_link_on_the_same_page_loads_it(page, tmp_path):
    open_editor(page)
    state = shipped_state()
    state["draft"][0] = ["1/2", "1/8", "0", "1/8", "1/4", "0"]
    state["target"][0] = ["1/2", "1/8", "0", "1/8", "1/4", "0"]
    page.evaluate(f"location.hash = {json.dumps(fragment_of(state))}")
    wait_until(page, "() => document.querySelector('[data-readout=\"accept-rate-1\"]').dataset.exact === '1'")
    assert_matches_engine(page, tmp_path, state)


def broken(change) -> dict:
    state = shipped_state()
    change(state)
    return state


INVALID = {
    "row-sum": (fragment_of(broken(lambda s: s["target"][2].__setitem__(0, "1/8"))), "target row 3 sums to 9/8, not 1"),
    "negative": (
        fragment_of(broken(lambda s: s["draft"][1].__setitem__(0, "-1/8") or s["draft"][1].__setitem__(1, "5/8"))),
        "draft row 2, token \u201cthe\u201d: -1/8 is negative",
    ),
    "wrong-length": (
        fragment_of(broken(lambda s: s["draft"].pop())),
        "the draft has 4 rows, but with 6 target rows it needs 5, one fewer than the target",
    ),
    "short-row": (
        fragment_of(broken(lambda s: s["target"][0].pop())),
        "target row 1 has 5 probabilities, but there are 6 tokens",
    ),
    "garbage": (PREFIX + "%7B%22target%22%3A%5B%5B", "it is not readable JSON"),
    "not-an-object": (PREFIX + "%5B1%2C2%5D", "it is not a JSON object with target, draft, proposals and cost_model"),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_an_invalid_link_says_what_is_wrong_in_one_sentence_and_keeps_the_shipped_state(page, tmp_path, name):
    fragment, reason = INVALID[name]
    open_editor(page, fragment)
    text = error_text(page)
    assert text == f"This link's what-if state was not loaded, because {reason}.", text
    assert text.count(". ") == 0 and text.endswith(".")
    assert_matches_engine(page, tmp_path, shipped_state())


def test_an_invalid_link_followed_later_keeps_the_current_edited_state(page, tmp_path):
    open_editor(page)
    page.select_option("#wi-k", "2")
    edited = current_state(page)
    page.evaluate(f"location.hash = {json.dumps(INVALID['negative'][0])}")
    wait_until(page, "() => !document.querySelector('[data-wi=\"error\"]').hidden")
    assert "-1/8 is negative" in error_text(page)
    assert_matches_engine(page, tmp_path, edited)


def tab_to(page, predicate: str, limit: int = 200) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => {{ const e = document.activeElement; return !!e && ({predicate}); }}"):
            return
    pytest.fail(f"Tab never reached: {predicate}")


def test_keyboard_alone_edits_a_cell_rebalances_moves_probability_and_hears_the_result(page, tmp_path):
    open_editor(page)
    first_cell = cell(page, "target", "the")
    tab_to(page, f"e.getAttribute('aria-label') === {json.dumps(first_cell.get_attribute('aria-label'))}")
    # Down takes one step (1/8) out of the cell and gives it to the largest other cell, a (1/4): the row
    # still sums to 1, so nothing is ever invalid from the arrow keys.
    page.keyboard.press("ArrowDown")
    wait_until(page, "() => document.activeElement.value === '3/8'")  # the key's handler may run a moment later
    assert error_text(page) == ""
    state = current_state(page)
    assert state["target"][0] == ["3/8", "1/8", "0", "1/8", "3/8", "0"]
    assert cell(page, "target", "a").input_value() == "3/8"
    wait_until(
        page,
        "() => document.querySelector('[data-wi=\"live\"]').textContent.startsWith("
        "'Removed 1/8 from the and gave 1/8 to a in the target row at position 1.')",
    )
    page.keyboard.press("ArrowUp")  # and back: the largest other cell is a again
    wait_until(page, "() => document.activeElement.value === '1/2'")
    assert current_state(page)["target"][0] == ["1/2", "1/8", "0", "1/8", "1/4", "0"]
    # Typing breaks the row; the Rebalance button is a few Tabs on, and puts the focus back in the cell.
    page.keyboard.press("Control+A")
    page.keyboard.type("0.75")
    assert "target row 1 sums to 5/4, not 1" in error_text(page)
    tab_to(page, "e.dataset.wi === 'fix'", limit=12)  # the cells below it, then the button
    assert page.evaluate("document.activeElement.textContent") == "Rebalance: take 1/4 from a"
    page.keyboard.press("Enter")
    label = json.dumps(first_cell.get_attribute("aria-label"))
    wait_until(page, f"() => document.activeElement.getAttribute('aria-label') === {label}")
    assert error_text(page) == "" and not is_stale(page)
    assert current_state(page)["target"][0] == ["3/4", "1/8", "0", "1/8", "0", "0"]
    # Into the Move control: Tab until its button, choosing from and to on the way with the keyboard.
    tab_to(page, "e.id === 'wi-move-to'", limit=80)
    page.keyboard.press("ArrowDown")  # cat -> sat
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.wi") == "move"
    page.keyboard.press("Enter")
    wait_until(page, "() => document.querySelector('[data-wi=\"move-status\"]').textContent.startsWith('Moved')")
    state = current_state(page)
    assert state["target"][0][0] == "5/8" and state["target"][0][2] == "1/8"
    got = assert_matches_engine(page, tmp_path)
    live = page.locator('[data-wi="live"]')
    assert live.get_attribute("aria-live") == "polite"
    expected = Fraction(got["expected-tokens"])
    heard = f"Expected tokens per round {decimals.fixed(expected, 2)}, exactly {expected}"
    wait_until(page, f"() => document.querySelector('[data-wi=\"live\"]').textContent.includes({json.dumps(heard)})")


def test_the_calculator_matches_the_closed_form_and_best_k(page):
    open_editor(page)
    page.fill("#wi-calc-alpha", "80")
    page.fill("#wi-calc-c", "5")
    page.fill("#wi-calc-k", "7")
    got = readouts(page)
    alpha, c = Fraction(80, 100), Fraction(5, 100)
    assert got["calc-speedup"] == str(analysis.leviathan_speedup(alpha, 7, c))
    best = analysis.best_draft_length(alpha, c, 16)
    assert got["calc-best-k"] == str(best)
    assert got["calc-best-speedup"] == str(analysis.leviathan_speedup(alpha, best, c))
    assert f"best K = {best}" in page.locator('#what-if [data-wi="calc-curve"] svg').text_content()
    page.focus("#wi-calc-alpha")
    page.keyboard.press("ArrowLeft")
    assert readouts(page)["calc-speedup"] == str(analysis.leviathan_speedup(Fraction(79, 100), 7, c))


def test_the_calculator_agrees_with_the_editor_where_every_position_accepts_alike(page, tmp_path):
    """Target and draft rows shifted so each position's acceptance rate is 3/4, verification one step."""
    tokens = list(load_profiles(PROFILES).tokens)
    target_row = ["1/2", "1/4", "1/4", "0", "0", "0"]
    draft_row = ["1/4", "1/4", "1/4", "1/4", "0", "0"]
    state = {
        "target": [target_row] * 5,
        "draft": [draft_row] * 4,
        "proposals": [tokens[0]] * 4,
        "cost_model": {"draft_step": "3/20", "verify_step": "1"},
    }
    open_editor(page, fragment_of(state))
    editor = assert_matches_engine(page, tmp_path, state)
    assert {editor[f"accept-rate-{i}"] for i in range(1, 5)} == {"3/4"}
    page.fill("#wi-calc-alpha", "75")
    page.fill("#wi-calc-c", "15")
    page.fill("#wi-calc-k", "4")
    assert readouts(page)["calc-speedup"] == editor["speedup"]
    got = readouts(page)
    assert got["calc-editor-closed-form"] == got["calc-editor-speedup"] == editor["speedup"]
    assert "the same number" in page.locator('[data-wi="calc-compare"]').text_content()
    page.fill("#wi-calc-alpha", "10")
    page.click('[data-wi="calc-use-editor"]')
    assert readouts(page)["calc-speedup"] == editor["speedup"]


def test_where_the_rates_differ_by_position_the_closed_form_is_called_an_approximation(page, tmp_path):
    open_editor(page)
    got = readouts(page)
    rates = [Fraction(got[f"accept-rate-{i}"]) for i in range(1, 6)]
    on_grid = Fraction(decimals.rounded(sum(rates) / len(rates), 2), 100)  # the rate the calculator can take
    assert got["calc-editor-closed-form"] == str(analysis.leviathan_speedup(on_grid, 5, Fraction(1, 10)))
    assert got["calc-editor-closed-form"] != got["calc-editor-speedup"] == got["speedup"]
    assert "only an approximation" in page.locator('[data-wi="calc-compare"]').text_content()
    page.fill("#wi-verify-step", "2")
    assert "set the editor's verification step to 1" in page.locator('[data-wi="calc-compare"]').text_content()


def test_without_javascript_the_page_shows_its_tables_and_one_note(browser, origin):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/what-if.html")
    assert pg.locator(".what-if-nojs").is_visible()
    assert not pg.locator("[data-what-if-app]").is_visible()
    pg.goto(f"{origin}/positions-reference.html")
    tables = pg.locator("table.positions-table")
    assert tables.count() > 10 and all(tables.nth(i).is_visible() for i in range(tables.count()))
    context.close()


def test_choosing_a_position_by_keyboard_keeps_focus_on_its_button(page):
    open_editor(page)
    page.focus('#what-if [data-position="2"]')
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.dataset.position") == "2"
    assert page.get_attribute('#what-if [data-position="2"]', "aria-pressed") == "true"
    assert page.get_attribute('#what-if [data-position="0"]', "aria-pressed") == "false"
    assert cell(page, "target", "the").get_attribute("aria-label").endswith("at position 3")
    page.keyboard.press("ArrowRight")  # nothing moves focus but Tab: no roving focus to learn
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.position") == "3"


# --- typing decimals, rebalancing, readouts, phones, malformed addresses, one rounding rule ------------


def test_decimals_and_percentages_are_read_exactly(page, tmp_path):
    open_editor(page)
    cell(page, "draft", "the").fill("0.5")  # 3/8 before
    assert "draft row 1 sums to 9/8, not 1" in error_text(page)
    cell(page, "draft", "cat").fill("12.5%")  # 1/4 before
    assert error_text(page) == ""
    cell(page, "draft", "a").fill("0")
    assert "draft row 1 sums to 7/8, not 1" in error_text(page)
    cell(page, "draft", "mat").fill(".25")
    assert error_text(page) == ""
    state = current_state(page)
    assert state["draft"][0] == ["1/2", "1/8", "0", "1/8", "0", "1/4"], "the address keeps exact fractions"
    assert cell(page, "draft", "cat").input_value() == "12.5%", "the cell keeps what the reader typed"
    assert_matches_engine(page, tmp_path)


def test_one_click_rebalances_the_row_keeping_the_cell_just_typed(page, tmp_path):
    open_editor(page)
    page.click('[data-position="3"]')  # position 4: target 1/4 0 1/8 1/2 1/8 0
    wait_until(page, "() => document.querySelector('[data-position=\"3\"]').getAttribute('aria-pressed') === 'true'")
    cell(page, "target", "sat").fill("0.75")  # sums to 13/8
    assert "target row 4 sums to 13/8, not 1" in error_text(page)
    assert fix_button(page).text_content() == "Rebalance: take 5/8 from on and the"
    fix_button(page).click()
    wait_until(page, "() => document.querySelector('[data-wi=\"error\"]').hidden")
    state = current_state(page)
    assert state["target"][3] == ["1/8", "0", "3/4", "0", "1/8", "0"]
    assert not is_stale(page)
    assert_matches_engine(page, tmp_path)
    # Enter in the cell does what the button does
    cell(page, "target", "the").fill("0")
    assert fix_button(page).text_content() == "Rebalance: give 1/8 to sat"
    cell(page, "target", "the").press("Enter")
    wait_until(page, "() => document.querySelector('[data-wi=\"error\"]').hidden")
    assert current_state(page)["target"][3] == ["0", "0", "7/8", "0", "1/8", "0"]


def test_a_rebalance_offered_for_another_row_fixes_that_row(page):
    open_editor(page)
    cell(page, "draft", "the").fill("1/4")  # position 1's draft sums to 7/8
    page.click('[data-position="2"]')
    assert "draft row 1 sums to 7/8, not 1" in error_text(page)
    fix_button(page).click()
    wait_until(page, "() => document.querySelector('[data-wi=\"error\"]').hidden")
    assert page.get_attribute('#what-if [data-position="0"]', "aria-pressed") == "true", "the row it fixed is shown"
    assert sum(Fraction(x) for x in current_state(page)["draft"][0]) == 1


def test_readouts_show_a_short_decimal_and_the_exact_fraction_on_demand(page):
    open_editor(page)
    speedup = page.locator('#what-if [data-readout="speedup"]')
    exact = Fraction(speedup.get_attribute("data-exact"))
    assert speedup.inner_text() == decimals.times(exact)
    alpha = page.locator('#what-if [data-readout="accept-rate-1"]')
    assert alpha.inner_text() == decimals.fixed(Fraction(alpha.get_attribute("data-exact")), 3)
    overlap = page.locator('#what-if tbody tr[data-token="0"] [data-derived="overlap"]')
    assert overlap.inner_text() == "0.375"
    assert "/" not in page.locator('#what-if [data-wi="results"]').inner_text(), "no fraction until asked for"
    page.check('#what-if [data-wi="exact"]')
    assert speedup.inner_text() == f"{decimals.times(exact)} = {exact}"
    assert overlap.inner_text() == "3/8"
    page.uncheck('#what-if [data-wi="exact"]')
    assert speedup.inner_text() == decimals.times(exact)


def columns_fit(page) -> list[str]:
    """What does not fit: the page wider than the screen, a table wider than its box, a heading cut off."""
    return page.evaluate("""() => {
        const bad = [];
        const width = document.documentElement.clientWidth;
        if (document.documentElement.scrollWidth > width) bad.push('page ' + document.documentElement.scrollWidth);
        for (const box of document.querySelectorAll('#what-if .wi-scroll')) {
            if (box.scrollWidth > box.clientWidth) bad.push('table ' + box.scrollWidth + ' in ' + box.clientWidth);
        }
        for (const th of document.querySelectorAll('#what-if .wi-table th, #what-if .wi-table td')) {
            const r = th.getBoundingClientRect();
            if (r.right > width || r.left < 0) bad.push('cell at ' + Math.round(r.left) + '..' + Math.round(r.right));
        }
        return bad;
    }""")


@pytest.mark.parametrize("width", [360, 390, 1280])
def test_every_column_is_visible_without_scrolling_sideways(page, width):
    page.set_viewport_size({"width": width, "height": 844})
    try:
        for profile in ("aligned", "divergent"):
            open_editor(page)
            page.select_option("#wi-profile", profile)
            for position in range(6):
                page.click(f'#what-if [data-position="{position}"]')
                assert columns_fit(page) == [], (profile, position)
                headings = page.locator("#what-if .wi-table thead th")
                assert all(headings.nth(i).is_visible() for i in range(headings.count()))
            cell(page, "target", "the").fill("0.3333")  # an invalid row: the sum and its tag must fit too
            assert columns_fit(page) == []
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


def assert_one_tab_selected(page) -> None:
    wait_until(page, "() => document.querySelector('#positions.is-enhanced') !== null")
    selected = page.locator('#positions [role="tab"][aria-selected="true"]')
    assert selected.count() == 1
    shown = page.evaluate("[...document.querySelectorAll('#positions > .tab-panel')].filter(p => !p.hidden).length")
    assert shown == 1


MALFORMED = {
    "percent": ("#%", None),
    "what-if-percent": ("#what-if=%", "This link's what-if state was not loaded, because it is not readable JSON."),
    "bad-escape": ("#what-if=%E0%A4%A", "This link's what-if state was not loaded, because it is not readable JSON."),
    "huge": ("#" + "x" * 100_000, None),
    "huge-what-if": (
        PREFIX + "%" * 100_000,
        "This link's what-if state was not loaded, because it is longer than 20000 characters.",
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_address_throws_nothing_keeps_a_tab_selected_and_the_what_if_says_why(page, tmp_path, name):
    fragment, sentence = MALFORMED[name]
    open_editor(page, fragment)  # the page fixture fails the test on any uncaught error or console error
    assert error_text(page) == (sentence or "")
    if sentence:  # in view as the page opens
        assert page.evaluate("""() => {
            const r = document.querySelector('#what-if [data-wi="error"]').getBoundingClientRect();
            return r.top >= 0 && r.bottom <= innerHeight; }""")
    assert_matches_engine(page, tmp_path, shipped_state())
    # the same address followed later, on the open page
    open_editor(page)
    page.evaluate(f"location.hash = {json.dumps(fragment)}")
    page.wait_for_timeout(100)
    if sentence:
        wait_until(page, "() => !document.querySelector('[data-wi=\"error\"]').hidden")
    assert error_text(page) == (sentence or "")
    # the tables' page keeps one draft's tab selected, opened with the address or given it later
    open_reference(page, fragment)
    assert_one_tab_selected(page)
    open_reference(page)
    page.evaluate(f"location.hash = {json.dumps(fragment)}")
    page.wait_for_timeout(100)
    assert_one_tab_selected(page)


def test_a_tab_named_in_the_address_is_still_selected(page):
    open_reference(page, "#positions-divergent")
    assert_one_tab_selected(page)
    assert page.get_attribute("#positions-divergent-tab", "aria-selected") == "true"


def test_the_editor_prints_the_same_decimals_as_the_pages(page, site_dir):
    """Expected tokens and speedups of the shipped drafts, and the closed form's best speedups: the string the
    editor shows is the string the pages print (one rounding rule in Python and JavaScript)."""
    from generator.model.facts import build_facts
    from generator.site.pipeline import load_inputs

    config, profiles = load_inputs(ROOT)
    facts = build_facts(profiles, config)
    pages_text = "".join(
        (site_dir / name).read_text(encoding="utf-8") for name in ("speedup.html", "tokens-per-round.html")
    )
    open_editor(page)
    for profile in facts.profiles:
        page.select_option("#wi-profile", profile.id)
        exact = json.dumps(str(profile.speedup))
        wait_until(page, f"() => document.querySelector('[data-readout=\"speedup\"]').dataset.exact === {exact}")
        shown = page.locator('#what-if [data-readout="speedup"] .wi-dec').inner_text()
        assert shown == decimals.times(profile.speedup) and f"<strong>{shown}</strong>" in pages_text
        tokens = page.locator('#what-if [data-readout="expected-tokens"] .wi-dec').inner_text()
        assert tokens == decimals.fixed(profile.expected_tokens, 2) and tokens in pages_text
    curves = [c for c in facts.speedup_curves if (c.alpha * 100).denominator == 1 and (c.cost * 100).denominator == 1]
    assert curves
    for curve in curves:
        page.fill("#wi-calc-alpha", str(int(curve.alpha * 100)))
        page.fill("#wi-calc-c", str(int(curve.cost * 100)))
        assert page.locator('#what-if [data-readout="calc-best-k"]').inner_text() == str(curve.best_k)
        shown = page.locator('#what-if [data-readout="calc-best-speedup"] .wi-dec').inner_text()
        assert shown == decimals.times(curve.best_speedup) and f"<td>{shown}</td>" in pages_text, shown


def test_the_calculator_starts_where_use_the_editors_numbers_puts_it(page):
    open_editor(page)
    start = {name: page.input_value(f"#wi-calc-{name}") for name in ("alpha", "k", "c")}
    page.fill("#wi-calc-alpha", "10")
    page.fill("#wi-calc-c", "50")
    page.click('[data-wi="calc-use-editor"]')
    assert {name: page.input_value(f"#wi-calc-{name}") for name in ("alpha", "k", "c")} == start
    rates = [Fraction(readouts(page)[f"accept-rate-{i}"]) for i in range(1, 6)]
    mean = sum(rates) / len(rates)
    assert start["alpha"] == str(decimals.rounded(mean, 2))  # 33/40 -> 83: a tie, away from zero
    assert page.locator('[data-wi="calc-alpha-value"]').inner_text() == decimals.fixed(
        Fraction(int(start["alpha"]), 100), 2
    )


def test_with_exact_fractions_on_the_editors_table_matches_the_pages_tables(page):
    """The static tables (on the appendix page) print min(p, q) and the residual as fractions; the editor, asked
    for exact fractions, prints the same strings for the shipped drafts (and the same decimals as the rule without
    them)."""
    open_reference(page)
    static = {
        (
            profile,
            position,
        ): page.evaluate(f"""() => [...document.querySelectorAll('#positions-{profile}-{position} tbody tr')]
                .map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent.trim()))
                .map(cells => [cells[2], cells[4]])""")
        for profile in ("aligned", "divergent")
        for position in range(1, 6)
    }
    assert all(len(rows) == 6 for rows in static.values())
    open_editor(page)
    page.check('#what-if [data-wi="exact"]')
    for profile in ("aligned", "divergent"):
        page.select_option("#wi-profile", profile)
        for position in range(1, 6):
            page.click(f'#what-if [data-position="{position - 1}"]')
            editor = page.evaluate("""() => [...document.querySelectorAll('#what-if .wi-table tbody tr')]
                .map(tr => ['overlap', 'residual']
                    .map(name => tr.querySelector(`[data-derived="${name}"]`).innerText.trim()))""")
            assert editor == static[profile, position], (profile, position)


def test_the_calculator_names_the_k_that_prints_the_same_speedup_as_the_best(page):
    """Issue 32.7: the calculator starts at best K 7, 2.68x, while K = 6 also prints 2.68x; the readout names the
    tie, as the facts computed it, and a grid point without a tie names none."""
    from support import site_view

    w = site_view(ROOT).what_if
    open_editor(page)
    got = readouts(page)
    assert got["calc-best-k"] == str(w.calculator_best_k)
    ties = [k for k in range(1, w.calculator_max_k + 1) if k != w.calculator_best_k]
    curve = {k: analysis.leviathan_speedup(w.calculator_alpha, k, w.calculator_draft_step) for k in range(1, 17)}
    shown = decimals.times(curve[w.calculator_best_k])
    ties = [k for k in ties if decimals.times(curve[k]) == shown]
    assert ties and list(w.calculator_ties) == ties  # the start has a tie, so this test can see it
    tie = page.locator('#what-if [data-readout="calc-ties"]')
    assert tie.get_attribute("data-exact") == " ".join(map(str, ties))
    assert f"K = {ties[0]} prints the same" in tie.inner_text()
    assert f"K = {ties[0]} prints the same to two decimals" in page.locator('[data-wi="calc-caption"]').inner_text()
    page.fill("#wi-calc-alpha", "50")  # alpha 1/2, c 1/10: best K 2 at 1.46x, alone
    assert page.locator('#what-if [data-readout="calc-ties"]').count() == 0


def test_use_the_editors_numbers_prints_the_value_its_sentence_quotes(page):
    """Issue 32.7: the sentence beside the button quotes the closed form at the numbers the button hands the
    calculator (the mean rate on the calculator's grid), so after pressing it both print the same speedup."""
    open_editor(page)
    quoted = page.locator('#what-if [data-readout="calc-editor-closed-form"] .wi-dec').inner_text()
    page.fill("#wi-calc-alpha", "10")
    page.click('[data-wi="calc-use-editor"]')
    assert page.locator('#what-if [data-readout="calc-speedup"] .wi-dec').inner_text() == quoted
    got = readouts(page)
    assert got["calc-speedup"] == got["calc-editor-closed-form"]
    assert "rounded to the calculator's steps of 1/100" in page.locator('[data-wi="calc-compare"]').text_content()


def test_what_the_page_says_to_try_first_does_what_it_says(page):
    """Issue 32.3: the page's first sentence says what to try; doing it (the named draft and position, one step of
    the target's probability from its favourite token there onto the proposal) makes the always-rejected proposal
    pass sometimes and raises tokens per round and the speedup, as the sentence promises."""
    from support import site_view

    ctx = site_view(ROOT)
    p, f = ctx.notable.target_zero
    open_editor(page)
    intro = page.locator("main .prose > p").first.inner_text()
    assert f"start from {p.name.lower()}, open position {f.position}" in intro and f.proposal in intro
    page.select_option("#wi-profile", p.id)
    wait_until(page, f"() => document.querySelector('[data-readout=\"speedup\"]').dataset.exact === '{p.speedup}'")
    before = readouts(page)
    assert before[f"proposal-accept-{f.position}"] == "0"
    page.click(f'#what-if [data-position="{f.position - 1}"]')
    row = p.position(f.position).target
    favourite = max(range(len(row)), key=lambda i: row[i])
    page.select_option("#wi-move-row", "target")
    page.select_option("#wi-move-from", str(favourite))
    page.select_option("#wi-move-to", str(ctx.tokens.index(f.proposal)))
    page.click('#what-if [data-wi="move"]')
    after = readouts(page)
    assert Fraction(after[f"proposal-accept-{f.position}"]) > 0
    assert Fraction(after["expected-tokens"]) > Fraction(before["expected-tokens"])
    assert Fraction(after["speedup"]) > Fraction(before["speedup"])


def test_a_link_made_for_the_toy_data_page_opens_the_same_state_on_the_editors_page(page):
    """The editor moved from positions.html (issue 32.3); a #what-if= link made before the move is forwarded, state
    and all, and the toy data page without such a fragment stays where it is."""
    open_editor(page)
    page.select_option("#wi-k", "3")
    fragment = page.evaluate("location.hash")
    expected = readouts(page)
    page.goto(f"{page.origin}/positions.html{fragment}")
    page.wait_for_url("**/what-if.html#what-if=*")
    page.wait_for_selector("#what-if.is-enhanced")
    assert readouts(page) == expected
    page.goto(f"{page.origin}/positions.html#figure-profile-aligned")
    assert page.url.endswith("/positions.html#figure-profile-aligned")


IN_VIEW = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"""


@pytest.mark.parametrize("field", ["#wi-draft-step", "#wi-verify-step"])
def test_a_bad_cost_is_flagged_on_its_field_with_the_reason_in_view_on_a_phone(page, field):
    """A phone reader who types a bad cost sees why at once: the field is marked invalid and the sentence stands
    under the cost fields (it used to sit after the cells, 940 px below the field, off a 844 px screen)."""
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        open_editor(page)
        page.locator(field).scroll_into_view_if_needed()
        page.fill(field, "-1")
        wait_until(page, "() => !document.querySelector('[data-wi=\"error\"]').hidden")
        assert page.get_attribute(field, "aria-invalid") == "true"
        assert page.evaluate(IN_VIEW, '#what-if [data-wi="error"]'), "the reason is off screen"
        other = "#wi-verify-step" if field == "#wi-draft-step" else "#wi-draft-step"
        assert page.get_attribute(other, "aria-invalid") == "false"
        page.fill(field, "1/10")  # negative control: a valid cost clears the mark and the sentence
        wait_until(page, "() => document.querySelector('[data-wi=\"error\"]').hidden")
        assert page.get_attribute(field, "aria-invalid") == "false"
        # a bad cell puts the sentence back right after the cells
        cell(page, "target", "the").fill("0.3333")
        wait_until(page, "() => !document.querySelector('[data-wi=\"error\"]').hidden")
        follows = "document.querySelector('#what-if .wi-scroll').nextElementSibling"
        assert page.evaluate(f"() => {follows} === document.querySelector('[data-wi=\"error\"]')")
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
