import json
import signal
import subprocess
import sys
from fractions import Fraction as F

import pytest

from support import ROOT


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True)


def test_numbers_json_reports_exact_fractions_and_frame_counts_for_the_shipped_profiles():
    result = run("numbers", "--json")
    assert result.returncode == 0, result.stderr
    profiles = {p["id"]: p for p in json.loads(result.stdout)["profiles"]}
    assert profiles["aligned"]["expected_tokens"] == "2009/512"
    assert profiles["aligned"]["speedup"] == "2009/768"
    assert profiles["aligned"]["frame_count"] == 8
    assert profiles["divergent"]["expected_tokens"] == "1343/512"
    assert profiles["divergent"]["frame_count"] == 5
    assert profiles["divergent"]["accept_rates"] == ["3/4", "1/2", "5/8", "3/4", "1/2"]
    assert sum(F(p) for p in profiles["divergent"]["round_length_distribution"]) == 1


def test_numbers_prints_a_readable_summary():
    result = run("numbers")
    assert result.returncode == 0
    assert "expected tokens per round: 2009/512 = 3.9238" in result.stdout
    assert "frames in the authored round: 5" in result.stdout


def test_numbers_works_for_any_valid_file_including_a_free_draft(tmp_path):
    doc = {
        "version": 1,
        "tokens": ["x", "y", "z"],
        "cost_model": {"draft_step": "0", "verify_step": "1"},
        "target": [["1/7", "2/7", "4/7"], ["1/3", "1/3", "1/3"]],
        "drafts": [
            {
                "id": "one",
                "name": "One",
                "description": "k = 1",
                "distributions": [["1/2", "1/2", "0"]],
                "proposals": ["y"],
            }
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = run("numbers", "--data", str(path), "--json")
    assert result.returncode == 0, result.stderr
    (p,) = json.loads(result.stdout)["profiles"]
    alpha = F(1, 7) + F(2, 7)
    assert p["accept_rates"] == [str(alpha)]
    assert p["round_length_distribution"] == [str(1 - alpha), str(alpha)]
    assert p["expected_tokens"] == str(1 + alpha) == p["speedup"]
    assert p["frame_count"] in (3, 4)


def test_numbers_on_a_bad_file_exits_2_without_a_traceback(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{", encoding="utf-8")
    result = run("numbers", "--data", str(path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_an_unknown_verb_is_refused_with_usage():
    result = run("publish")
    assert result.returncode == 2
    assert "usage" in result.stderr


@pytest.mark.parametrize("args", [("numbers", "--json"), ("numbers",), ("validate",)])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(args):
    """`python -m generator numbers --json | true`: the reader is gone before the first write, as `| head -1` can be."""
    command = subprocess.Popen(
        [sys.executable, "-m", "generator", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    command.stdout.close()
    stderr = command.stderr.read()
    status = command.wait(timeout=120)
    assert stderr == ""  # no traceback, no "Exception ignored" from the last flush
    assert status == 128 + signal.SIGPIPE  # as a Unix tool killed by SIGPIPE reports it
