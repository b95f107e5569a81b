"""One rounding rule, half away from zero on the exact value, in Python and in the pages' JavaScript."""

import json
import os
import shutil
import subprocess
from fractions import Fraction

import pytest

from generator import decimals
from support import ROOT

NODE = shutil.which("node")


@pytest.mark.parametrize(
    "value,digits,text",
    [
        (Fraction(13, 8), 2, "1.63"),
        (Fraction(33, 40), 2, "0.83"),
        (Fraction(-13, 8), 2, "-1.63"),
        (Fraction(-33, 40), 2, "-0.83"),
        (Fraction(5, 2), 0, "3"),
        (Fraction(-5, 2), 0, "-3"),
        (Fraction(1, 3), 4, "0.3333"),
        (Fraction(-1, 1000), 2, "0.00"),
        (0.125, 2, "0.13"),
        (2.675, 2, "2.67"),
        (-0.0, 1, "0.0"),
        (7, 1, "7.0"),
    ],
)
def test_fixed_rounds_ties_away_from_zero_on_the_exact_value(value, digits, text):
    assert decimals.fixed(value, digits) == text


def test_percentages_ratios_and_scientific_notation_use_the_same_rule():
    assert decimals.pct(Fraction(1, 8)) == "13%" and decimals.pct(Fraction(1, 8), 1) == "12.5%"
    assert decimals.pct(Fraction(-1, 8)) == "-13%"
    assert decimals.times(Fraction(13, 8)) == "1.63\u00d7"
    assert decimals.points(Fraction(5, 1000)) == "0.5 percentage points"
    assert decimals.sci(0.0000125, 1) == "1.3 \u00d7 10^-5"  # 1.25e-5 as a float is a hair above the tie
    assert decimals.sci(Fraction(125, 10**7), 1) == "1.3 \u00d7 10^-5"
    assert decimals.sci(Fraction(996, 10**5), 1) == "1.0 \u00d7 10^-2"
    assert decimals.sci(0, 1) == "0.0 \u00d7 10^0"


def test_a_value_with_no_decimal_is_refused():
    with pytest.raises(ValueError):
        decimals.fixed(float("nan"))


def test_the_page_filters_print_with_the_rule():
    from generator.render.pages import FILTERS

    assert FILTERS["fixed"](Fraction(13, 8)) == "1.63"
    assert FILTERS["times"](Fraction(13, 8)) == "1.63\u00d7"
    assert FILTERS["pct"](Fraction(1, 8)) == "13%"
    assert FILTERS["points"](Fraction(5, 1000)) == "0.5 percentage points"
    assert FILTERS["sci"](Fraction(125, 10**7)) == "1.3 \u00d7 10^-5"


def test_node_prints_every_vector_as_python_does(tmp_path):
    if NODE is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed, and CI must run the JavaScript parity tests")
        pytest.skip("node is not installed, so decimals.js cannot be checked against Python")
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(decimals.parity_vectors()), encoding="utf-8")
    run = subprocess.run(
        [NODE, "--test", "tests/js/decimals.test.mjs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "DECIMALS_VECTORS": str(path)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# pass 3" in run.stdout and "# fail 0" in run.stdout, run.stdout
