"""The what-if editor's JavaScript against the Python engine: node replays vectors generator/render/whatif.py writes."""

import os
import shutil
import subprocess
from fractions import Fraction

import pytest

from generator.model import analysis
from generator.model.profiles import load_profiles, parse_profiles
from generator.render import whatif
from support import PROFILES, ROOT

NODE = shutil.which("node")


def test_node_reproduces_every_exact_number_of_the_python_vectors(tmp_path):
    if NODE is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed, and CI must run the JavaScript parity tests")
        pytest.skip("node is not installed, so what-if-core.js cannot be checked against Python")
    vectors = whatif.write_parity_vectors(load_profiles(PROFILES), 16, tmp_path / "vectors.json")
    run = subprocess.run(
        [NODE, "--test", "tests/js/what-if.test.mjs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "WHATIF_VECTORS": str(vectors)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    written = (ROOT / "tests" / "js" / "what-if.test.mjs").read_text(encoding="utf-8").count("\ntest(")
    assert f"# pass {written}" in run.stdout and "# fail 0" in run.stdout, run.stdout


def test_every_random_vector_is_a_profile_the_data_loader_accepts_with_the_same_numbers():
    """A vector's state, made into a data file, loads and summarises to the numbers the vector holds."""
    vectors = whatif.parity_vectors(load_profiles(PROFILES), 16)
    assert {len(c["state"]["draft"]) for c in vectors["cases"]} == set(range(1, 9))
    for case in vectors["cases"]:
        state = case["state"]
        k = state.get("k", len(state["draft"]))
        doc = {
            "version": 1,
            "tokens": state["tokens"],
            "cost_model": state["cost_model"],
            "target": state["target"][: k + 1],
            "drafts": [
                {
                    "id": "d",
                    "name": "d",
                    "description": "d",
                    "distributions": state["draft"][:k],
                    "proposals": state["proposals"][:k],
                }
            ],
        }
        profiles = parse_profiles(doc)
        row = analysis.numbers_table(profiles, 0)[0]
        for key in ("accept_rates", "round_length_distribution", "expected_tokens", "speedup"):
            assert row[key] == case["numbers"][key], (case["id"], key)


def test_the_editor_starts_from_the_shipped_profiles_and_a_calculator_on_its_grid():
    from generator.model.facts import build_facts
    from generator.site.pipeline import load_inputs

    config, profiles = load_inputs(ROOT)
    data = whatif.editor_data(build_facts(profiles, config))
    assert [p["id"] for p in data["profiles"]] == [d.id for d in profiles.drafts]
    for shipped, draft in zip(data["profiles"], profiles.drafts):
        state = shipped["state"]
        assert state["target"] == [[str(p) for p in row] for row in profiles.target]
        assert state["draft"] == [[str(p) for p in row] for row in draft.distributions]
        assert state["proposals"] == [profiles.tokens[i] for i in draft.proposals]
    assert data["steps"] == [str(s) for s in config.what_if.steps]
    calc = data["calculator"]
    grid = config.what_if.calculator_steps
    assert grid % Fraction(calc["alpha"]).denominator == 0 and grid % Fraction(calc["draft_step"]).denominator == 0
    alphas = analysis.acceptance_rates(profiles.target, profiles.drafts[0].distributions)
    assert abs(Fraction(calc["alpha"]) - sum(alphas) / len(alphas)) <= Fraction(1, 2 * grid)
    assert calc["k"] == profiles.k and calc["max_k"] == config.speedup.max_k


@pytest.mark.parametrize(
    "setting,problem",
    [
        ("steps: [0]", "what_if.steps[0]: a step must be above 0 and at most 1, not 0"),
        ("steps: [3/2]", "what_if.steps[0]: a step must be above 0 and at most 1, not 3/2"),
        ("steps: [0.125]", "what_if.steps[0]: must be an exact number such as 1/20, not 0.125"),
        ("calculator_steps: 0", "what_if.calculator_steps: must be at least 1, not 0"),
    ],
)
def test_the_editors_settings_are_checked_and_named_in_one_line(tmp_path, setting, problem):
    from generator.model.config import ConfigError, load_config

    path = tmp_path / "site.yaml"
    path.write_text(f"what_if:\n  {setting}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: {problem}"
    path.write_text("what_if:\n  steps: [1/4, 1/3]\n", encoding="utf-8")
    assert load_config(path).what_if.steps == (Fraction(1, 4), Fraction(1, 3))
