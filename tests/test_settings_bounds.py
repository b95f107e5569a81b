"""Issue 31, item 5: every setting and profile the schema accepts builds, and everything past a limit is refused by
`validate` and by the build alike, in one line naming the setting (never our code).

The limits are what the machine honours (a build at a limit finishes within about a minute and a few GiB on two
cores) and what every figure shows legibly. The two builds at the limits are the slowest tests here: each computes
its Monte Carlo, playground and figures from scratch.
"""

import copy
import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

from generator.__main__ import main
from generator.model import config as schema
from generator.model import profiles as P


def one_line(err: str, names: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("error: ") and names in lines[0], lines[0][:500]
    assert "generator/" not in lines[0] and "Traceback" not in lines[0] and ".py" not in lines[0], lines[0]
    return lines[0]


def run(root: Path, monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    code = main(list(argv))
    return code, capsys.readouterr().err


def refused_alike(root: Path, monkeypatch, capsys, names: str) -> str:
    """`validate` and `build` both refuse, with the same one line naming `names`; build/ is not made."""
    code, err = run(root, monkeypatch, capsys, "validate")
    assert code == 2, err
    from_validate = one_line(err, names)
    code, err = run(root, monkeypatch, capsys, "build")
    assert code == 2, err
    assert one_line(err, names) == from_validate
    assert not (root / "build").exists()
    return from_validate


# --- the settings in data/site.yaml -----------------------------------------------------------------------


def bounded_settings() -> dict[str, tuple]:
    """Every setting with a limit, by its dotted place: (the limit, its default)."""
    found = {}

    def walk(cls, where: str) -> None:
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            if dataclasses.is_dataclass(default):
                walk(type(default), f"{where}{f.name}.")
            elif "max" in f.metadata:
                found[f"{where}{f.name}"] = (f.metadata["max"], default)

    walk(schema.SiteConfig, "")
    return found


def value_at(place: str, count: int):
    """`count` for a number; a list of `count` different items for a list (a value listed twice is refused)."""
    top, default = bounded_settings()[place]
    if not isinstance(default, tuple):
        return count
    name = place.rsplit(".", 1)[1]
    items = {
        "alphas": [f"{i}/{count + 1}" for i in range(1, count + 1)],  # acceptance rates below 1
        "costs": [f"{i}/{20 * count}" for i in range(1, count + 1)],
        "steps": [f"1/{i + 1}" for i in range(1, count + 1)],
        "books": list(range(1, count + 1)),
        "sources": [{"label": f"Source {i}", "url": f"https://example.org/{i}"} for i in range(count)],
    }
    return items[name]


def set_setting(root: Path, place: str, value) -> None:
    path = root / "data" / "site.yaml"
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    *parents, name = place.split(".")
    here = settings
    for part in parents:
        here = here.setdefault(part, {})
    here[name] = value
    if place.startswith("playground.check_draws"):  # keep min <= draws <= max, so only the limit is at stake
        for other in ("check_draws_min", "check_draws", "check_draws_max"):
            settings["playground"][other] = min(settings["playground"][other], value)
        settings["playground"][name] = value
        settings["playground"]["check_draws_max"] = max(settings["playground"]["check_draws_max"], value)
    path.write_text(yaml.safe_dump(settings, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_the_expensive_settings_all_have_limits():
    """The settings whose size drives time, memory or a figure's crowding each have a limit in the schema."""
    places = set(bounded_settings())
    assert {
        "monte_carlo.rounds",
        "monte_carlo.random_profiles",
        "monte_carlo.identity_pairs",
        "playground.rounds",
        "playground.max_k",
        "playground.prose.target_order",
        "playground.code.draft_order",
        "speedup.max_k",
        "speedup.alphas",
        "what_if.calculator_steps",
    } <= places


@pytest.mark.parametrize("place", sorted(bounded_settings()))
def test_a_setting_past_its_limit_is_refused_by_validate_and_build_alike(place, project, monkeypatch, capsys):
    top, _ = bounded_settings()[place]
    set_setting(project, place, value_at(place, top + 1))
    line = refused_alike(project, monkeypatch, capsys, f"data/site.yaml: {place}: ")
    assert f"{top:,}" in line or f"{top} items" in line


@pytest.mark.parametrize("place", ["speedup.alphas", "speedup.costs", "what_if.steps", "playground.prose.books"])
def test_a_value_listed_twice_is_refused_by_validate_and_build_alike(place, project, monkeypatch, capsys):
    """Two equal costs drew two figures of one name, and the build failed in generator/render/figures.py."""
    items = value_at(place, 2)
    set_setting(project, place, [items[0], items[1], items[0]])
    line = refused_alike(project, monkeypatch, capsys, f"data/site.yaml: {place}: ")
    assert "listed twice" in line


@pytest.mark.parametrize("value", [1.0e-310, 1.0e-13])
def test_a_family_alpha_too_small_to_print_is_refused_by_validate_and_build_alike(value, project, monkeypatch, capsys):
    """The build used to stop on OverflowError in generator/model/facts.py ("one in N" past a float's range)."""
    set_setting(project, "monte_carlo.family_alpha", value)
    line = refused_alike(project, monkeypatch, capsys, "data/site.yaml: monte_carlo.family_alpha: ")
    assert "at least 1e-12" in line


@pytest.mark.parametrize("place", ["monte_carlo.rounds", "speedup.alphas"])
def test_a_setting_at_its_limit_is_accepted_by_validate_negative_control(place, project, monkeypatch, capsys):
    top, _ = bounded_settings()[place]
    set_setting(project, place, value_at(place, top))
    code, err = run(project, monkeypatch, capsys, "validate")
    assert code == 0, err


def test_the_site_builds_with_every_limited_setting_at_its_limit(project, monkeypatch, capsys, tmp_path):
    """All at once, the worst case: if this builds, each limit alone does. (Slow: about a minute of CPU.)"""
    for place, (top, _) in bounded_settings().items():
        if place.endswith(("books", "sources")):  # more books is a longer corpus, checked by its own bound below
            continue
        set_setting(project, place, value_at(place, top))
    code, err = run(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err
    numbers = json.loads((tmp_path / "out" / "numbers.json").read_text(encoding="utf-8"))
    assert numbers
    weights = {p.name: p.stat().st_size for p in (tmp_path / "out" / "figures").glob("*.svg")}
    assert max(weights.values()) < 400_000, weights  # a phone still loads each figure (the batch curve drew 1e6 points)


# --- the playground's orders against the corpus they count -------------------------------------------------


def many_character_corpus(root: Path, distinct: int, words: int = 14) -> None:
    """A corpus of `distinct` different characters (Greek, Cyrillic and more), long enough to train on, in lines
    of `words` words (12 or more make a prompt)."""
    alphabet = [chr(c) for c in range(0x391, 0x391 + distinct)]
    lines = [" ".join(alphabet[i : i + words]) for i in range(0, distinct, 3)]
    (root / "data" / "corpus" / "many.txt").write_text("\n".join(lines * 3) + "\n", encoding="utf-8")
    set_setting(root, "playground.prose", {"files": "corpus/many.txt", "target_order": 8, "draft_order": 3})


def test_an_order_too_long_for_the_corpus_alphabet_is_refused_naming_the_setting(project, monkeypatch, capsys):
    """300 distinct characters to the 8th power do not fit the models' int64 keys: the build said AssertionError
    in generator/playground/ngram.py."""
    many_character_corpus(project, 300)
    code, err = run(project, monkeypatch, capsys, "build")
    assert code == 2
    line = one_line(err, "data/site.yaml: playground.prose.target_order: 8 is too long")
    assert "302 distinct characters (at most 7)" in line  # the space and the newline are characters too


def test_an_order_that_fits_the_corpus_alphabet_is_trained_negative_control(
    small_project, monkeypatch, capsys, tmp_path
):
    project = small_project  # what is at stake is that the order trains, not how many rounds it measures
    many_character_corpus(project, 300)
    set_setting(project, "playground.prose.target_order", 7)
    code, err = run(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err


def test_a_corpus_that_offers_no_prompt_is_refused_naming_the_setting(small_project, monkeypatch, capsys):
    """Lines of 7 words hold no prompt for the page to open on: the build failed in the page's template."""
    project = small_project
    many_character_corpus(project, 300, words=7)
    set_setting(project, "playground.prose.target_order", 5)
    code, err = run(project, monkeypatch, capsys, "build")
    assert code == 2
    one_line(err, "data/site.yaml: playground.prose.files: the held-out last tenth of this corpus offers no example")


# --- the profiles file --------------------------------------------------------------------------------------


def widen(raw: dict, tokens: int = 6, positions: int = 5, drafts: int = 2, label: int = 3, name: int = 0) -> dict:
    """The shipped profiles with more tokens (probability 0 everywhere), positions (rows repeated), drafts
    (copies), a longer first token label and longer draft names: every authored round still shows what the pages
    walk through."""
    raw = copy.deepcopy(raw)
    extra = tokens - len(raw["tokens"])
    first = raw["tokens"][0]
    raw["tokens"][0] = first.ljust(label, "e")
    raw["tokens"] += [f"w{i}" for i in range(extra)]
    rows = raw["target"][:-1]
    raw["target"] = [r + ["0"] * extra for r in [rows[i % len(rows)] for i in range(positions)] + raw["target"][-1:]]
    for d in raw["drafts"]:
        k = len(d["distributions"])
        d["distributions"] = [d["distributions"][i % k] + ["0"] * extra for i in range(positions)]
        d["proposals"] = [
            raw["tokens"][0] if p == first else p for p in (d["proposals"][i % k] for i in range(positions))
        ]
    shipped = raw["drafts"]
    raw["drafts"] = [copy.deepcopy(shipped[i % len(shipped)]) for i in range(drafts)]
    for i, d in enumerate(raw["drafts"]):
        if i >= len(shipped):
            d["id"] = f"copy-{i}"
        d["name"] = d["name"].ljust(name, "n")
    return raw


def save(root: Path, raw: dict) -> None:
    (root / "data" / "profiles.v1.json").write_text(json.dumps(raw, indent=1, ensure_ascii=False), encoding="utf-8")


PAST_LIMITS = {  # what widen() is given, and the place the one line names
    "positions": ({"positions": P.MAX_POSITIONS + 1}, "data/profiles.v1.json: target: "),
    "K = 20": ({"positions": 20}, "data/profiles.v1.json: target: 20 positions"),
    "K = 500": ({"positions": 500}, "data/profiles.v1.json: target: 500 positions"),
    "tokens": ({"tokens": P.MAX_TOKENS + 1}, "data/profiles.v1.json: tokens: "),
    "drafts": ({"drafts": P.MAX_DRAFTS + 1}, "data/profiles.v1.json: drafts: "),
    "a long token label": ({"label": P.MAX_LABEL + 1}, "data/profiles.v1.json: tokens[0]: "),
    "a long draft name": ({"name": P.MAX_NAME + 1}, "data/profiles.v1.json: draft 'aligned', field name: "),
}


@pytest.mark.parametrize("case", sorted(PAST_LIMITS))
def test_profiles_past_a_limit_are_refused_by_validate_and_build_alike(
    case, project, raw_profiles, monkeypatch, capsys
):
    wide, names = PAST_LIMITS[case]
    save(project, widen(raw_profiles, **wide))
    refused_alike(project, monkeypatch, capsys, names)


@pytest.mark.parametrize("step", ["1/10000000", "1/9999999999999999999999999999999999999999"])
def test_a_verification_pass_too_small_to_price_is_refused_by_validate_and_build_alike(
    step, project, raw_profiles, monkeypatch, capsys
):
    """The build used to stop on ZeroDivisionError in generator/playground/__init__.py. Any step below the
    smallest (1/1000000) has a denominator over the 1,000,000 any profile term may have, which is what the
    line says first."""
    raw_profiles["cost_model"]["verify_step"] = step
    save(project, raw_profiles)
    line = refused_alike(project, monkeypatch, capsys, "data/profiles.v1.json: cost_model.verify_step: ")
    assert f"'{step}' has more digits than the site works with" in line, line
    assert "up to 1,000,000" in line, line


def test_the_smallest_verification_pass_is_accepted_negative_control(project, raw_profiles, monkeypatch, capsys):
    raw_profiles["cost_model"]["verify_step"] = str(P.MIN_VERIFY_STEP)
    save(project, raw_profiles)
    code, err = run(project, monkeypatch, capsys, "validate")
    assert code == 0, err


def test_profiles_at_every_limit_at_once_build(small_project, raw_profiles, monkeypatch, capsys, tmp_path):
    """The most positions, tokens, drafts and the longest labels and names, together: validate says ok and the
    build draws every figure legibly. (Slow: every figure and the Monte Carlo, small here, are computed again.)"""
    project = small_project
    widest = widen(
        raw_profiles, P.MAX_TOKENS, P.MAX_POSITIONS, P.MAX_DRAFTS, P.MAX_LABEL, P.MAX_NAME
    )  # the negative control of the refusals above: one past any of these is refused
    save(project, widest)
    code, err = run(project, monkeypatch, capsys, "validate")
    assert code == 0, err
    code, err = run(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "figures" / "manifest.json").read_text(encoding="utf-8"))
    assert len(re.findall(r"copy-\d", json.dumps(manifest))) > 0  # the copies were drawn too
