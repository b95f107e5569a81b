"""The pull request's sticky figure-review comment (.ci/review_comment.py), from real builds.

Two builds of the project that differ in exactly one figure go through `compare`, and the
comment the workflow would post is read back: the counts, the one figure's row, the link to the
review page. Identical builds must say that no figure changed. The comment workflow's own step
(`review_comment.py review`) computes the review from the two uploaded builds, so a review.json
that the pull request's job slips into the artifact changes nothing. Posting is checked against a
fake GitHub API: it updates its own earlier comment, and it refuses a pull request that has moved on.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.commands.compare import write_review
from support import ROOT, built_copy

spec = importlib.util.spec_from_file_location("review_comment", ROOT / ".ci" / "review_comment.py")
rc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc)

HEAD, BASE = "a" * 40, "b" * 40
URL = "https://github.com/o/r/actions/runs/1/artifacts/2"


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    root, _, _ = built_copy(tmp_path_factory.mktemp("review"))
    base = root / "build"
    head = Path(shutil.copytree(base, root / "head"))
    svg = head / "figures" / "roofline.svg"
    text = svg.read_text()
    svg.write_text(text.replace(re.search(r"#[0-9a-f]{6}", text).group(0), "#ff00ff"))
    return root, base, head


def comment(root: Path, base: Path, head: Path, name: str) -> str:
    out = root / name
    write_review(base, head, out)
    (out / "pr.json").write_text(json.dumps({"number": 7, "base_sha": BASE}))
    return rc.body(rc.read_review(out), URL, "https://github.com/o/r/actions/runs/1", HEAD, BASE)


def test_a_comment_for_builds_that_differ_in_one_figure(two_builds):
    root, base, head = two_builds
    text = comment(root, base, head, "one")
    assert text.startswith(rc.MARKER + "\n## Figure review\n")
    assert re.search(
        r"\*\*1 figure changed\*\*, 0 added, 0 removed, \d+ unchanged; no page's visible text changed\.", text
    )
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows == [
        "| `roofline` | changed | same inputs and code: the environment (fonts, library versions) differs |"
    ]
    assert f"[Open the review page]({URL})" in text and "pixel-difference image" in text
    assert f"Pull request at {HEAD[:12]}, compared with {BASE[:12]}" in text


def artifact(tmp: Path, base: Path | None, head: Path) -> Path:
    """The figure-builds artifact as the pull request's job uploads it: base/, head/ and pr.json."""
    builds = tmp / "figure-builds"
    if base is not None:
        shutil.copytree(base, builds / "base")
    shutil.copytree(head, builds / "head")
    (builds / "pr.json").write_text(json.dumps({"number": 7, "base_sha": BASE}))
    return builds


def test_the_comment_workflow_computes_the_review_itself_and_ignores_a_review_in_the_artifact(two_builds, tmp_path):
    _, base, head = two_builds
    builds = artifact(tmp_path, base, head)
    # What a malicious pull request's job could add to the artifact: a verdict of its own.
    forged = {"version": 1, "figures": [{"name": "roofline", "status": "unchanged"}], "pages": []}
    (builds / "review.json").write_text(json.dumps(forged))
    (builds / "head" / "review.json").write_text(json.dumps(forged))
    out = tmp_path / "figure-review"
    assert rc.main(["review", str(builds), "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {".figure-review", "index.html", "summary.md", "review.json", "pr.json"}
    text = rc.body(rc.read_review(out), URL, "", HEAD, BASE)
    assert "**1 figure changed**" in text and "| `roofline` | changed |" in text
    assert "No figure changed" not in text


def test_the_review_runs_the_checked_out_compare_not_code_from_the_build(two_builds, tmp_path):
    """The step runs from a folder full of the pull request's files; only the checkout's compare may run."""
    _, base, head = two_builds
    builds = artifact(tmp_path, base, head)
    evil = builds / "head" / "generator"
    (evil / "commands").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "commands/__init__.py", "commands/compare.py", "errors.py"):
        (evil / name).write_text("raise SystemExit('the pull request ran code')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / ".ci" / "review_comment.py"),
            "review",
            str(builds),
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=builds / "head",
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "ran code" not in done.stdout + done.stderr, done.stderr
    assert "1 figures changed" in done.stdout


def test_a_base_that_did_not_build_shows_every_figure_as_added(two_builds, tmp_path):
    _, _, head = two_builds
    builds = artifact(tmp_path, None, head)
    out = tmp_path / "figure-review"
    rc.review(builds, out)
    review = rc.read_review(out)
    assert review["figures"] and {f["status"] for f in review["figures"]} == {"added"}


def test_a_malformed_manifest_still_gets_a_comment_that_says_the_review_failed(two_builds, tmp_path):
    """A stale "No figure changed" must not stay up: the comment says the builds could not be compared."""
    _, base, head = two_builds
    builds = artifact(tmp_path, base, head)
    (builds / "head" / "figures" / "manifest.json").write_text('{"figures": [')
    out = tmp_path / "figure-review"
    assert rc.main(["review", str(builds), "--out", str(out)]) == 0  # the upload and post steps still run
    text = rc.body(rc.read_review(out), URL, "", HEAD, BASE)
    assert "**The review could not compare the two builds**" in text and "manifest.json" in text
    assert "No figure changed" not in text and "figure changed" not in text
    assert "could not compare" in (out / "summary.md").read_text()
    fake = FakeGitHub(HEAD, [])
    assert rc.post(fake, "o/r", 7, HEAD, text).startswith("added comment")


def test_a_symlink_in_a_build_is_not_followed(two_builds, tmp_path):
    _, base, head = two_builds
    builds = artifact(tmp_path, base, head)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2")
    (builds / "head" / "leak.txt").symlink_to(secret)
    out = tmp_path / "figure-review"
    rc.review(builds, out)
    assert "leak.txt" not in (out / "review.json").read_text() and "hunter2" not in (out / "index.html").read_text()


def test_a_comment_for_identical_builds_says_no_figure_changed(two_builds):
    root, base, _ = two_builds
    text = comment(root, base, base, "same")
    assert "**No figure changed**" in text and "| `" not in text


def test_untrusted_review_data_cannot_inject_markdown_or_mentions(tmp_path):
    (tmp_path / "review.json").write_text(
        json.dumps(
            {
                "figures": [
                    {"name": "ok", "status": "changed", "why": "@octocat <img src=x> [a](http://e) | x", "notes": []},
                    {"name": "](http://evil)", "status": "changed", "why": ""},
                    {"name": "x", "status": "exploded"},
                ],
                "pages": [{"path": "../../etc", "status": "changed", "added": "9; rm", "removed": 1}],
            }
        )
    )
    text = rc.body(rc.read_review(tmp_path), "javascript:alert(1)", "", "not-a-sha", "")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows == ["| `ok` | changed | &#64;octocat &lt;img src=x&gt; &#91;a&#93;(http://e) &#124; x |"]
    assert "javascript" not in text and "evil" not in text and "not-a-sha" not in text


class FakeGitHub:
    def __init__(self, head_sha, comments):
        self.head_sha, self.comments, self.calls = head_sha, comments, []

    def __call__(self, method, path, payload):
        self.calls.append((method, path, payload))
        if method == "GET" and path.endswith("/pulls/7"):
            return {"head": {"sha": self.head_sha}}
        if method == "GET":
            return self.comments
        return {"id": 99}


def test_posting_updates_its_own_comment_and_leaves_others_alone():
    api = FakeGitHub(
        HEAD,
        [
            {"id": 1, "user": {"login": "someone"}, "body": rc.MARKER + " quoted by a person"},
            {"id": 2, "user": {"login": rc.BOT}, "body": rc.MARKER + "\nold"},
        ],
    )
    assert rc.post(api, "o/r", 7, HEAD, "new") == "updated comment 2"
    assert api.calls[-1] == ("PATCH", "/repos/o/r/issues/comments/2", {"body": "new"})


def test_posting_adds_a_comment_when_there_is_none_yet():
    api = FakeGitHub(HEAD, [{"id": 1, "user": {"login": "someone"}, "body": "hello"}])
    assert rc.post(api, "o/r", 7, HEAD, "new") == "added comment 99"
    assert api.calls[-1] == ("POST", "/repos/o/r/issues/7/comments", {"body": "new"})


def test_posting_refuses_a_pull_request_that_is_not_at_the_reviewed_commit():
    """A forged pr.json naming another pull request, or a stale run, must not post anything."""
    api = FakeGitHub("c" * 40, [])
    assert rc.post(api, "o/r", 7, HEAD, "new").startswith("skipped")
    assert [c[0] for c in api.calls] == ["GET"]


def test_a_malformed_pull_request_number_is_rejected(tmp_path):
    for raw in ('{"number": "7; rm -rf /"}', '{"number": true}', '{"number": -3}', "not json"):
        (tmp_path / "pr.json").write_text(raw)
        assert rc.pull_request_number(tmp_path) is None
    (tmp_path / "pr.json").write_text('{"number": 12}')
    assert rc.pull_request_number(tmp_path) == 12


def test_posting_without_a_usable_pull_request_or_commit_refuses_in_one_line(tmp_path, capsys):
    (tmp_path / "review.json").write_text('{"figures": [], "pages": []}')
    (tmp_path / "pr.json").write_text('{"number": 7}')
    assert rc.main(["post", str(tmp_path), "--repo", "o/r", "--head-sha", "not-a-sha"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
