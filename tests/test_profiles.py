import json
import subprocess
import sys
from fractions import Fraction

import pytest

from generator.model.profiles import DataError, load_profiles, parse_profiles
from support import PROFILES, ROOT


def test_the_shipped_file_has_six_tokens_five_positions_and_a_bonus_row():
    p = load_profiles(PROFILES)
    assert len(p.tokens) == 6
    assert p.k == 5
    assert len(p.target) == 6
    assert [d.id for d in p.drafts] == ["aligned", "divergent"]


def test_every_shipped_probability_is_an_eighth_and_every_row_sums_to_one():
    p = load_profiles(PROFILES)
    rows = list(p.target) + [r for d in p.drafts for r in d.distributions]
    for row in rows:
        assert sum(row) == 1
        assert all(isinstance(x, Fraction) and (x * 8).denominator == 1 for x in row)


def test_the_aligned_draft_leaves_only_its_second_proposal_to_chance():
    """Every aligned proposal but the second is one the target likes at least as much as the draft (kept outright);
    the second is one the draft overrates but the target still allows, so a uniform draw decides it."""
    p = load_profiles(PROFILES)
    d = p.draft("aligned")
    chance = [i + 1 for i, x in enumerate(d.proposals) if not p.target[i][x] >= d.distributions[i][x]]
    assert chance == [2]
    for i, x in enumerate(d.proposals):
        assert p.target[i][x] > 0 and d.distributions[i][x] > 0


def test_the_divergent_draft_proposes_a_token_the_target_never_produces_at_position_three():
    p = load_profiles(PROFILES)
    d = p.draft("divergent")
    for i in (0, 1):
        assert p.target[i][d.proposals[i]] >= d.distributions[i][d.proposals[i]]
    assert p.target[2][d.proposals[2]] == 0


def test_a_yaml_copy_of_the_profiles_loads_to_the_same_thing(tmp_path, raw_profiles):
    import yaml

    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump(raw_profiles), encoding="utf-8")
    a, b = load_profiles(path), load_profiles(PROFILES)
    assert (a.tokens, a.target, a.drafts, a.cost_model) == (b.tokens, b.target, b.drafts, b.cost_model)


def _break(raw, change):
    change(raw)
    return raw


BAD_INPUTS = {
    "a missing key": (lambda r: r.pop("cost_model"), "top level: missing key 'cost_model'"),
    "an unknown key": (lambda r: r.update(colour="blue"), "top level: unknown key 'colour'"),
    "an unknown draft key": (lambda r: r["drafts"][0].update(weight=1), "draft 'aligned': unknown key 'weight'"),
    "a float probability": (
        lambda r: r["target"][0].__setitem__(0, 0.5),
        "target, position 1, token 'the': 0.5 is not an exact fraction",
    ),
    "a probability that is not a fraction": (
        lambda r: r["drafts"][1]["distributions"][3].__setitem__(2, "one eighth"),
        "draft 'divergent', position 4, field distributions, token 'sat': 'one eighth' is not an exact fraction",
    ),
    "a negative probability": (
        lambda r: r["drafts"][0]["distributions"][1].__setitem__(0, "-1/8"),
        "draft 'aligned', position 2, field distributions, token 'the': probability -1/8 is negative",
    ),
    "a probability above one": (
        lambda r: r["target"][5].__setitem__(0, "9/8"),
        "target, bonus position, token 'the': probability 9/8 is above 1",
    ),
    "a row that does not sum to one": (
        lambda r: r["drafts"][0]["distributions"][4].__setitem__(0, "1/8"),
        "draft 'aligned', position 5, field distributions: probabilities sum to 7/8, not 1",
    ),
    "a row of the wrong length": (
        lambda r: r["target"][2].pop(),
        "target, position 3: has 5 probabilities, expected 6 (one per token)",
    ),
    "duplicate token labels": (lambda r: r["tokens"].__setitem__(5, "cat"), "tokens[5]: duplicate token label 'cat'"),
    "a proposal that is not a token": (
        lambda r: r["drafts"][1]["proposals"].__setitem__(1, "dog"),
        "draft 'divergent', position 2, field proposals: 'dog' is not one of the tokens",
    ),
    "a proposal the draft gives probability zero": (
        lambda r: r["drafts"][0]["proposals"].__setitem__(2, "the"),
        "draft 'aligned', position 3, field proposals: the draft gives its own proposal 'the' probability 0",
    ),
    "too few target rows": (
        lambda r: r["target"].pop(),
        "draft 'aligned', field distributions: has 5 positions but the target has 4 positions plus the bonus",
    ),
    "too many target rows": (
        lambda r: r["target"].append(list(r["target"][0])),
        "draft 'aligned', field distributions: has 5 positions but the target has 6 positions plus the bonus",
    ),
    "proposals and distributions of different lengths": (
        lambda r: r["drafts"][1]["proposals"].pop(),
        "draft 'divergent': 5 distributions but 4 proposals",
    ),
    "a zero denominator": (
        lambda r: r["target"][0].__setitem__(0, "1/0"),
        "target, position 1, token 'the': '1/0' divides by zero",
    ),
    "a denominator past the editor's limit": (
        lambda r: r["target"][0].__setitem__(0, "500001/1000001"),
        "target, position 1, token 'the': '500001/1000001' has more digits than the site works with",
    ),
    "a negative draft cost": (
        lambda r: r["cost_model"].__setitem__("draft_step", "-1/10"),
        "cost_model.draft_step: must not be negative",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_each_bad_input_is_reported_in_one_line_naming_file_and_place(case, raw_profiles):
    change, expected = BAD_INPUTS[case]
    with pytest.raises(DataError) as info:
        parse_profiles(_break(raw_profiles, change), "data/profiles.v1.json")
    message = str(info.value)
    assert message.startswith("data/profiles.v1.json: ")
    assert expected in message
    assert "\n" not in message


def test_invalid_json_names_the_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1,\n  "tokens": [}', encoding="utf-8")
    with pytest.raises(DataError, match=r"broken\.json: line 2, column \d+: invalid JSON"):
        load_profiles(path)


def test_an_unreadable_file_is_reported_not_raised(tmp_path):
    with pytest.raises(DataError, match="cannot read the file"):
        load_profiles(tmp_path / "missing.json")


@pytest.mark.parametrize("case", ["a row that does not sum to one", "a proposal that is not a token"])
def test_validate_exits_2_with_one_line_and_no_traceback(case, tmp_path, raw_profiles):
    change, expected = BAD_INPUTS[case]
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(_break(raw_profiles, change)), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "generator", "validate", str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and expected in lines[0]


def test_six_digit_fractions_are_within_the_limit(raw_profiles):
    """The negative control for the digit limit: the largest terms it allows load, in lowest terms."""
    raw_profiles["target"][0][0] = "999999/1999998"  # 1/2
    raw_profiles["cost_model"]["draft_step"] = "1/1000000"
    parse_profiles(raw_profiles, "profiles.json")


def test_validate_accepts_the_shipped_file():
    result = subprocess.run([sys.executable, "-m", "generator", "validate"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout
