"""The pull request's sticky figure-review comment (.ci/review_comment.py), from real builds.

Two builds of the project that differ in exactly one figure go through `compare`, and the
comment the workflow would post is read back: the counts, the one figure's row, the link to the
review page. Identical builds must say that no figure changed. Posting is checked against a fake
GitHub API: it updates its own earlier comment, and it refuses a pull request that has moved on.
"""
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from generator.commands.compare import write_review
from generator.site.cache import Cache
from generator.site.pipeline import build
from support import ROOT, copy_project

spec = importlib.util.spec_from_file_location("review_comment", ROOT / ".ci" / "review_comment.py")
rc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc)

HEAD, BASE = "a" * 40, "b" * 40
URL = "https://github.com/o/r/actions/runs/1/artifacts/2"


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("project"))
    build(root, root / "build", cache=Cache(tmp_path_factory.getbasetemp() / "generator-cache"))
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
    assert re.search(r"\*\*1 figure changed\*\*, 0 added, 0 removed, \d+ unchanged; no page's visible text changed\.", text)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows == ["| `roofline` | changed | same inputs and code: the environment (fonts, library versions) differs |"]
    assert f"[Open the review page]({URL})" in text and "pixel-difference image" in text
    assert f"Pull request at {HEAD[:12]}, compared with {BASE[:12]}" in text


def test_a_comment_for_identical_builds_says_no_figure_changed(two_builds):
    root, base, _ = two_builds
    text = comment(root, base, base, "same")
    assert "**No figure changed**" in text and "| `" not in text


def test_untrusted_review_data_cannot_inject_markdown_or_mentions(tmp_path):
    (tmp_path / "review.json").write_text(json.dumps({"figures": [
        {"name": "ok", "status": "changed", "why": "@octocat <img src=x> [a](http://e) | x", "notes": []},
        {"name": "](http://evil)", "status": "changed", "why": ""},
        {"name": "x", "status": "exploded"},
    ], "pages": [{"path": "../../etc", "status": "changed", "added": "9; rm", "removed": 1}]}))
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
    api = FakeGitHub(HEAD, [
        {"id": 1, "user": {"login": "someone"}, "body": rc.MARKER + " quoted by a person"},
        {"id": 2, "user": {"login": rc.BOT}, "body": rc.MARKER + "\nold"},
    ])
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


def test_the_review_page_address_comes_from_the_runs_artifact_list():
    def api(method, path, payload):
        assert (method, path) == ("GET", "/repos/o/r/actions/runs/5/artifacts?per_page=100")
        return {"artifacts": [{"name": "figure-review", "id": 3}, {"name": "figure-review.html", "id": 4}]}
    assert rc.review_page_url(api, "o/r", 5) == "https://github.com/o/r/actions/runs/5/artifacts/4"
    assert rc.review_page_url(lambda *a: {"artifacts": []}, "o/r", 5) == ""
