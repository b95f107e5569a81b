#!/usr/bin/env python3
"""The figure review's sticky comment on a pull request: the review, its text, and posting or updating it.

Run by .github/workflows/figure-review-comment.yml, a `workflow_run` workflow that holds a token
allowed to write pull-request comments. That workflow checks out the default branch (never the
pull request), so this file and generator/commands/compare.py beside it are trusted code; what
they read is not: the two builds and pr.json come from the artifact of a run that built the pull
request's code. `review` compares the builds here, with the default branch's `compare`, so the
pull request's code never writes review.json; `post` still treats it as data (numbers must be
numbers, names must look like figure names, every string is cut short and escaped) because the
builds' names and captions are the pull request's, and the pull request named in pr.json must
really be at the commit the run built.

Standard library only (compare.py is too), so it runs on the bare runner without installing anything.

    python3 .ci/review_comment.py review BUILDS_DIR --out REVIEW_DIR   (BUILDS_DIR holds base/, head/, pr.json)
    python3 .ci/review_comment.py body REVIEW_DIR [--review-url URL] [--run-url URL]
    python3 .ci/review_comment.py post REVIEW_DIR --repo OWNER/NAME --head-sha SHA [--review-url URL] [--run-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the default branch's checkout
MARKER = "<!-- figure-review -->"
BOT = "github-actions[bot]"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
PATH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
SHA = re.compile(r"^[0-9a-f]{40}$")
STATUSES = ("changed", "added", "removed", "unchanged")
MAX_ROWS = 40
MAX_BODY = 60000  # GitHub refuses comments over 65,536 characters


def plain(text: object, limit: int = 200) -> str:
    """Untrusted text made inert inside a Markdown table cell: no HTML, no mentions, no links, no pipes."""
    text = " ".join(str(text).split())[:limit]
    for char, safe in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("|", "&#124;"),
        ("@", "&#64;"),
        ("[", "&#91;"),
        ("]", "&#93;"),
        ("`", "&#96;"),
        ("*", "&#42;"),
        ("_", "&#95;"),
    ):
        text = text.replace(char, safe)
    return text


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def read_review(folder: Path) -> dict:
    """review.json, keeping only entries of the expected shape."""
    raw = json.loads((folder / "review.json").read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raw = {"error": "review.json is not an object"}
    if raw.get("error") is not None:
        return {"figures": [], "pages": [], "error": str(raw["error"])}
    figures = [
        f
        for f in raw.get("figures", [])
        if isinstance(f, dict)
        and isinstance(f.get("name"), str)
        and NAME.match(f["name"])
        and f.get("status") in STATUSES
    ]
    pages = [
        p
        for p in raw.get("pages", [])
        if isinstance(p, dict)
        and isinstance(p.get("path"), str)
        and PATH.match(p["path"])
        and p.get("status") in STATUSES[:3]
    ]
    for p in pages:
        p["added"] = int(p.get("added", 0)) if str(p.get("added", 0)).isdigit() else 0
        p["removed"] = int(p.get("removed", 0)) if str(p.get("removed", 0)).isdigit() else 0
    return {"figures": figures, "pages": pages}


def body(review: dict, review_url: str = "", run_url: str = "", head_sha: str = "", base_sha: str = "") -> str:
    """The comment's Markdown. The first line is the marker the next run finds it by."""
    figures, pages = review["figures"], review["pages"]
    count = {s: sum(1 for f in figures if f["status"] == s) for s in STATUSES}
    moved = [f for f in figures if f["status"] != "unchanged"]
    lines = [MARKER, "## Figure review", ""]
    if review.get("error"):
        problem = f"**The review could not compare the two builds**: {plain(review['error'], 400)}"
        return "\n".join([*lines, problem, "", "This comment is updated on every push.", ""])
    if moved:
        figure_note = (
            f"**{plural(count['changed'], 'figure')} changed**, {count['added']} added, "
            f"{count['removed']} removed, {count['unchanged']} unchanged"
        )
    else:
        figure_note = f"**No figure changed** ({plural(count['unchanged'], 'figure')} compared)"
    page_note = f"visible text changed on {plural(len(pages), 'page')}" if pages else "no page's visible text changed"
    lines += [f"{figure_note}; {page_note}.", ""]
    if review_url.startswith("https://"):
        lines += [
            f"[Open the review page]({review_url}): one HTML file with the before, the after and a "
            "pixel-difference image of every changed figure, and a diff of each page's text.",
            "",
        ]
    if moved:
        lines += ["| figure | change | why |", "| --- | --- | --- |"]
        for f in moved[:MAX_ROWS]:
            why = "; ".join(plain(x) for x in [f.get("why") or "", *(f.get("notes") or [])][:4] if x)
            lines.append(f"| `{f['name']}` | {f['status']} | {why} |")
        if len(moved) > MAX_ROWS:
            lines.append(f"| … | and {len(moved) - MAX_ROWS} more | |")
        lines.append("")
    if pages:
        lines.append("| page | change | lines |")
        lines.append("| --- | --- | --- |")
        for p in pages[:MAX_ROWS]:
            lines.append(f"| `{p['path']}` | {p['status']} | +{p['added']} −{p['removed']} |")
        if len(pages) > MAX_ROWS:
            lines.append(f"| … | and {len(pages) - MAX_ROWS} more | |")
        lines.append("")
    footer = []
    if SHA.match(head_sha):
        footer.append(f"Pull request at {head_sha[:12]}")
    if SHA.match(base_sha):
        footer.append(f"compared with {base_sha[:12]}, the first parent of its merge commit")
    if run_url.startswith("https://"):
        footer.append(f"[the run]({run_url})")
    if footer:
        lines += ["<sub>" + ", ".join(footer) + ". This comment is updated on every push.</sub>", ""]
    text = "\n".join(lines)
    return text if len(text) <= MAX_BODY else text[:MAX_BODY] + "\n\n(cut short)\n"


# --- posting ------------------------------------------------------------------------------------

Api = Callable[[str, str, dict | None], object]


def github_api(token: str) -> Api:
    def call(method: str, path: str, payload: dict | None = None):
        request = urllib.request.Request(
            f"https://api.github.com{path}",
            method=method,
            data=None if payload is None else json.dumps(payload).encode("utf-8"),
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read().decode("utf-8") or "null")

    return call


def pull_request_number(folder: Path) -> int | None:
    try:
        raw = json.loads((folder / "pr.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = raw.get("number") if isinstance(raw, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None


def review(builds: Path, out: Path) -> str:
    """Compare BUILDS/base with BUILDS/head using this checkout's compare, into OUT (with pr.json beside).

    A base that did not build is missing from the artifact: every figure then shows as added."""
    sys.path.insert(0, str(ROOT))
    from generator.commands.compare import headline, write_failure, write_review
    from generator.errors import UserError

    base, head = builds / "base", builds / "head"
    if not head.is_dir():
        raise SystemExit(f"error: {head}: the pull request's build is missing from the artifact")
    if not base.is_dir():
        base = builds / "empty-base"
        base.mkdir(exist_ok=True)
    try:
        figs, pages = write_review(base, head, out)
        said = headline(figs, pages)
    except UserError as exc:
        # The comment still says what happened: a malformed build is not a reason to leave an old review up.
        write_failure(out, str(exc))
        said = f"error: {exc}"
    if (builds / "pr.json").is_file() and not (builds / "pr.json").is_symlink():
        shutil.copyfile(builds / "pr.json", out / "pr.json")
    return said


def post(api: Api, repo: str, number: int, head_sha: str, text: str) -> str:
    """Update our earlier comment on the pull request, or add one; nothing when the pull request has moved on."""
    pull = api("GET", f"/repos/{repo}/pulls/{number}", None)
    if not isinstance(pull, dict) or pull.get("head", {}).get("sha") != head_sha:
        return "skipped: the pull request is no longer at the commit this review was built from"
    page = 1
    while True:
        comments = api("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100&page={page}", None) or []
        for c in comments:
            if c.get("user", {}).get("login") == BOT and str(c.get("body", "")).startswith(MARKER):
                api("PATCH", f"/repos/{repo}/issues/comments/{c['id']}", {"body": text})
                return f"updated comment {c['id']}"
        if len(comments) < 100:
            break
        page += 1
    created = api("POST", f"/repos/{repo}/issues/{number}/comments", {"body": text})
    return f"added comment {created.get('id') if isinstance(created, dict) else '?'}"


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    top.add_argument("action", choices=("review", "body", "post"))
    top.add_argument(
        "review",
        type=Path,
        help="review: the unpacked builds (base/, head/, pr.json); "
        "body, post: the review folder (review.json, and pr.json to post)",
    )
    top.add_argument("--out", type=Path, help="(review only) the folder to write the review into")
    top.add_argument("--review-url", default="", help="the review page's address (the upload step's artifact-url)")
    top.add_argument("--run-url", default="")
    top.add_argument("--repo", default="")
    top.add_argument("--head-sha", default="", help="the commit the review run built (from the workflow_run event)")
    args = top.parse_args(argv)
    if args.action == "review":
        if args.out is None:
            top.error("review needs --out")
        print(f"wrote {args.out}: {review(args.review, args.out)}")
        return 0
    try:
        pr = json.loads((args.review / "pr.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pr = {}
    base_sha = str(pr.get("base_sha", "")) if isinstance(pr, dict) else ""
    found = read_review(args.review)
    if args.action == "body":
        sys.stdout.write(body(found, args.review_url, args.run_url, args.head_sha, base_sha))
        return 0
    number = pull_request_number(args.review)
    if number is None or not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo) or not SHA.match(args.head_sha):
        print("error: pr.json, --repo or --head-sha is missing or malformed", file=sys.stderr)
        return 2
    api = github_api(os.environ["GITHUB_TOKEN"])
    text = body(found, args.review_url, args.run_url, args.head_sha, base_sha)
    print(post(api, args.repo, number, args.head_sha, text))
    if found.get("error"):
        print(f"error: {found['error']}", file=sys.stderr)
        return 1  # posted, and the run is red: the review did not happen
    return 0


if __name__ == "__main__":
    sys.exit(main())
