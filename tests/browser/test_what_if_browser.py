"""The what-if editor in Debian's chromium, on the real site: every readout it shows after an edit must
equal what `python -m generator numbers --data FILE --json` prints for the state in its own URL fragment.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction
from urllib.parse import quote, unquote

import pytest

from browser_support import serve, shared_tab, turn
from generator.model import analysis
from generator.model.profiles import load_profiles
from generator.render.whatif import parity_vectors
from support import PROFILES, ROOT

pytestmark = pytest.mark.browser

PREFIX = "#what-if="


@pytest.fixture(scope="module")
def origin(site_dir):
    with serve(site_dir) as url:
        yield url


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
    page.goto(f"{page.origin}/positions.html{fragment}")
    page.wait_for_selector("#what-if.is-enhanced")
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
    return json.loads(unquote(hash_[len(PREFIX):]))


def shipped_state() -> dict:
    profiles = load_profiles(PROFILES)
    draft = profiles.drafts[0]
    return {
        "target": [[str(p) for p in row] for row in profiles.target],
        "draft": [[str(p) for p in row] for row in draft.distributions],
        "proposals": [profiles.tokens[i] for i in draft.proposals],
        "cost_model": {"draft_step": str(profiles.cost_model.draft_step), "verify_step": str(profiles.cost_model.verify_step)},
    }


def engine_numbers(state: dict, tmp_path) -> dict:
    """The state as a profiles file (its first K positions), through the `numbers` command."""
    tokens = state.get("tokens") or list(load_profiles(PROFILES).tokens)
    k = state.get("k", len(state["draft"]))
    doc = {"version": 1, "tokens": tokens, "cost_model": state["cost_model"], "target": state["target"][: k + 1],
           "drafts": [{"id": "what-if", "name": "What if", "description": "From the editor.",
                       "distributions": state["draft"][:k], "proposals": state["proposals"][:k]}]}
    path = tmp_path / "what-if.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "generator", "numbers", "--data", str(path), "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
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
    return got


def error_text(page) -> str:
    box = page.locator('[data-wi="error"]')
    return box.text_content() if box.is_visible() else ""


def cell(page, which: str, token: str):
    return page.locator(f'#what-if input.wi-cell[data-which="{which}"][aria-label^="{"Target p" if which == "target" else "Draft q"} of {token} "]')


def test_the_editor_starts_from_the_first_shipped_profile_with_the_engines_numbers(page, tmp_path):
    open_editor(page)
    got = assert_matches_engine(page, tmp_path, shipped_state())
    cli = subprocess.run([sys.executable, "-m", "generator", "numbers", "--json"], cwd=ROOT, capture_output=True, text=True, check=False)
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


def test_editing_cells_keeps_the_last_valid_state_until_the_row_sums_to_one(page, tmp_path):
    open_editor(page)
    page.click('[data-position="1"]')  # position 2
    # a busy machine may run the click's handler after Playwright returns: filling a cell before it ran
    # edits position 1 instead (its row then sums to 1/2)
    wait_until(page, "() => document.querySelector('[data-position=\"1\"]').getAttribute('aria-pressed') === 'true'")
    before = readouts(page)
    cell(page, "target", "the").fill("0")
    assert "target row 2 sums to 7/8, not 1" in error_text(page)
    assert readouts(page) == before, "an invalid row must not change the results"
    cell(page, "target", "cat").fill("5/8")
    assert error_text(page) == ""
    picture = page.locator('#what-if [data-wi="position-picture"] svg').get_attribute("aria-label")
    assert picture.startswith("Position 2: target p and draft q by token") and "the: p 0, q 1/4; cat: p 5/8, q 3/8" in picture
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
    wait_until(page, "() => document.querySelector('[data-wi=\"move-status\"]').textContent.includes('less than the step')")
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


def test_a_what_if_link_restores_a_random_profile_with_any_denominators(page, tmp_path):
    vectors = parity_vectors(load_profiles(PROFILES), 16)
    case = next(c for c in vectors["cases"] if len(c["state"]["draft"]) == 7 and len(c["state"]["tokens"]) == 4)
    open_editor(page, fragment_of(case["state"]))
    assert error_text(page) == ""
    assert page.locator("#what-if tbody tr").count() == 4
    got = assert_matches_engine(page, tmp_path, case["state"])
    assert got["speedup"] == case["numbers"]["speedup"]
    assert page.locator('[data-position]').count() == 8  # seven positions and the bonus row
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
    "negative": (fragment_of(broken(lambda s: s["draft"][1].__setitem__(0, "-1/8") or s["draft"][1].__setitem__(1, "5/8"))),
                 "draft row 2, token \u201cthe\u201d: -1/8 is negative"),
    "wrong-length": (fragment_of(broken(lambda s: s["draft"].pop())), "the draft has 4 rows, but with 6 target rows it needs 5, one fewer than the target"),
    "short-row": (fragment_of(broken(lambda s: s["target"][0].pop())), "target row 1 has 5 probabilities, but there are 6 tokens"),
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


def test_keyboard_alone_edits_a_cell_moves_probability_and_hears_the_result(page, tmp_path):
    open_editor(page)
    first_cell = cell(page, "target", "the")
    for _ in range(200):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('aria-label')") == first_cell.get_attribute("aria-label"):
            break
    else:
        pytest.fail("Tab never reached the first probability cell")
    page.keyboard.press("ArrowDown")  # 1/2 -> 3/8: the row now sums to 7/8
    wait_until(page, "() => document.activeElement.value === '3/8'")  # the key's handler may run a moment later
    assert "target row 1 sums to 7/8, not 1" in error_text(page)
    page.keyboard.press("Tab")  # the draft cell of the same token
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowUp")  # back to 1/2
    wait_until(page, "() => document.activeElement.value === '1/2'")
    assert error_text(page) == ""
    # Into the Move control: Tab until its button, choosing from and to on the way with the keyboard.
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "wi-move-to":
            break
    page.keyboard.press("ArrowDown")  # cat -> sat
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.wi") == "move"
    page.keyboard.press("Enter")
    wait_until(page, "() => document.querySelector('[data-wi=\"move-status\"]').textContent.startsWith('Moved')")
    state = current_state(page)
    assert state["target"][0][0] == "3/8" and state["target"][0][2] == "1/8"
    got = assert_matches_engine(page, tmp_path)
    live = page.locator('[data-wi="live"]')
    assert live.get_attribute("aria-live") == "polite"
    wait_until(page, "() => document.querySelector('[data-wi=\"live\"]').textContent.includes('speedup')")
    expected = Fraction(got["expected-tokens"])
    assert f"Expected tokens per round {float(expected):.2f}" in live.text_content()


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
    state = {"target": [target_row] * 5, "draft": [draft_row] * 4, "proposals": [tokens[0]] * 4,
             "cost_model": {"draft_step": "3/20", "verify_step": "1"}}
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
    mean = sum(rates) / len(rates)
    assert got["calc-editor-closed-form"] == str(analysis.leviathan_speedup(mean, 5, Fraction(1, 10)))
    assert got["calc-editor-closed-form"] != got["calc-editor-speedup"] == got["speedup"]
    assert "only an approximation" in page.locator('[data-wi="calc-compare"]').text_content()
    page.fill("#wi-verify-step", "2")
    assert "set the editor's verification step to 1" in page.locator('[data-wi="calc-compare"]').text_content()


def test_without_javascript_the_page_shows_its_tables_and_one_note(browser, origin):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/positions.html")
    assert pg.locator(".what-if-nojs").is_visible()
    assert not pg.locator("[data-what-if-app]").is_visible()
    assert pg.locator("table.positions-table").count() > 10
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
