"""What lets the built site be found, cited and reused: its address, the build's date and commit, the
sitemap, the per-profile CSV, the JSON pages carry for their scripts, and the strict checks a build runs on
its own pages.

The address comes from `site_url` in site.yaml, overridden by the environment variable
GENERATOR_SITE_URL (the publishing workflow passes the address GitHub Pages reports). Without one,
no page carries an absolute address: canonical links, link-preview tags and the sitemap need one,
and everything else works from any folder and from file://.

The date is SOURCE_DATE_EPOCH when set, else the commit's date, never the clock: two builds of one commit are
byte-identical. Outside a git checkout and without SOURCE_DATE_EPOCH a page shows neither date nor commit, only
the version; a tree with tracked files that differ from the commit shows "(modified)" after it (untracked files,
such as a build's own output folder, do not count); without git on PATH the build says so in one warning line.
The commit is read with plain `git` commands.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from markupsafe import Markup

from .. import __version__
from ..errors import UserError

SITE_URL_ENV = "GENERATOR_SITE_URL"
CARD_FILE = "social-card.png"
CARD_SIZE = (1200, 630)
_URL = re.compile(r"https?://[^\s/?#\"'<>]+(?:/[^\s?#\"'<>]*)?")


@dataclass(frozen=True)
class BuildInfo:
    """Facts about this build (not about speculative decoding) that pages print in their head and footer."""

    site_url: str = ""  # absolute, ending in "/", or "" for none
    date: str = ""  # YYYY-MM-DD, or "" when unknown
    commit: str = ""  # the full hash, or "" outside a git checkout
    modified: bool = False  # built from a tree that differs from the commit: the footer says "(modified)"
    version: str = __version__
    content_licence: str = "CC BY 4.0"  # text, figures and data (LICENSE-CONTENT.md)
    content_licence_url: str = "https://creativecommons.org/licenses/by/4.0/"
    code_licence: str = "MIT"  # LICENSE

    @property
    def short_commit(self) -> str:
        return self.commit[:12]

    @property
    def citation_date(self) -> str:
        return self.date.replace("-", "/")

    def address(self, url: str) -> str:
        """A page's absolute address ("" without a site URL); the home page is the folder itself."""
        if not self.site_url:
            return ""
        return self.site_url if url == "index.html" else self.site_url + url


def site_url(configured: str, source: str) -> str:
    """The site's address from the environment or site.yaml, checked and ending in "/"."""
    from_env = os.environ.get(SITE_URL_ENV, "").strip()
    value, where = (from_env, SITE_URL_ENV) if from_env else (configured.strip(), f"{source}: site_url")
    if not value:
        return ""
    if not _URL.fullmatch(value):
        raise UserError(
            f"{where}: must be an absolute http or https address such as https://example.org/explainer/, not {value!r}"
        )
    return value if value.endswith("/") else value + "/"


def source_date_epoch() -> int | None:
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(value) if value.isdigit() else None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    """`git -C root ARGS`, or None when git is not on PATH."""
    try:
        return subprocess.run(
            ["git", "-C", str(root), "--no-optional-locks", *args],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return None
    except (OSError, subprocess.SubprocessError):
        return subprocess.CompletedProcess(args, 1, "", "")


NO_GIT_WARNING = (
    "warning: git is not on PATH: the footer shows the version alone (no commit, and no date "
    "unless SOURCE_DATE_EPOCH is set)"
)


def build_info(url: str, root: Path) -> BuildInfo:
    """The footer's facts: the address, the commit, its date and whether the tree differs (module docstring)."""
    log = _git(root, "log", "-1", "--format=%H %ct")
    if log is None:
        print(NO_GIT_WARNING, file=sys.stderr, flush=True)
    ok = log is not None and log.returncode == 0
    m = re.fullmatch(r"([0-9a-f]{40}|[0-9a-f]{64}) (\d+)\s*", log.stdout) if ok else None
    commit, modified, epoch = "", False, source_date_epoch()
    if m is not None:
        commit = m.group(1)
        status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".")
        modified = status is None or status.returncode != 0 or bool(status.stdout.strip())
        if epoch is None:
            epoch = int(m.group(2))
    date = time.strftime("%Y-%m-%d", time.gmtime(epoch)) if epoch is not None else ""
    return BuildInfo(url, date, commit, modified)


def sitemap(info: BuildInfo, urls: list[str]) -> bytes:
    """sitemap.xml: every page's absolute address (and the build date, when known)."""
    lastmod = f"<lastmod>{info.date}</lastmod>" if info.date else ""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    lines += [f"  <url><loc>{html.escape(info.address(url), quote=False)}</loc>{lastmod}</url>" for url in urls]
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def numbers_csv(numbers: list[dict]) -> bytes:
    """numbers.json's per-profile numbers as one row per draft profile, every value an exact fraction."""
    k = max((len(n["accept_rates"]) for n in numbers), default=0)
    header = ["profile", "expected_tokens", "speedup", "frame_count"]
    header += [f"accept_rate_position_{i}" for i in range(1, k + 1)]
    header += [f"p_round_length_{n}" for n in range(1, k + 2)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for n in numbers:
        rates = list(n["accept_rates"]) + [""] * (k - len(n["accept_rates"]))
        lengths = list(n["round_length_distribution"]) + [""] * (k + 1 - len(n["round_length_distribution"]))
        writer.writerow([n["id"], n["expected_tokens"], n["speedup"], n["frame_count"], *rates, *lengths])
    return out.getvalue().encode("utf-8")


# --- strict build -------------------------------------------------------------------------------


def broken_links(files: dict[str, bytes]) -> list[tuple[str, str, str]]:
    """(page, address, why) for every link or asset that breaks the site's rules: `check`'s own check
    (site/links.py), run on the pages before they are written."""
    from .links import broken_links as check_links

    return check_links(files)


def _link_line(page, url: str) -> int | None:
    """The line of the page's source where `url` is written as a link's address (Markdown's `](url)` or
    `[ref]: url`, or an href), not merely mentioned; None when the page's text does not spell it."""
    if not url:
        return None
    written = re.compile(
        r"(?:\]\(\s*<?|^\s*\[[^\]]+\]:[ \t]*<?|href\s*=\s*[\"']?)" + re.escape(url) + r"(?=[\s)\"'>]|$)", re.M
    )
    m = written.search(page.markdown)
    return None if m is None else page.body_line + page.markdown.count("\n", 0, m.start())


def strict_check(files: dict[str, bytes], pages) -> None:
    """Fail the build, in one line, on the first link or asset that breaks the site's rules, naming the file
    the reader's author wrote that holds it, with the line where its address is written there."""
    broken = broken_links(files)
    if not broken:
        return
    rel, url, why = broken[0]
    page = next((p for p in pages if p.url == rel), None)
    if page is None:
        where = f"site_src/templates/{rel}" if rel.endswith(".html") else rel
    else:
        line = _link_line(page, url)
        where = f"{page.source}: line {line}" if line else str(page.source)
    raise UserError(f"{where}: broken link {url!r}: {why}" if url else f"{where}: {why}")


def bibtex(info: BuildInfo, title: str, author: str) -> str:
    """A BibTeX entry for the explainer: the same facts as CITATION.cff, plus the address when known.
    No commit: the entry should read the same in every build of a release (the footer names the commit)."""
    fields = [("title", f"{{{title}}}"), ("author", f"{{{{{author}}}}}")]  # braces twice: a name, not "Last, First"
    if info.date:
        fields.append(("year", f"{{{info.date[:4]}}}"))
    fields.append(("version", f"{{{info.version}}}"))
    if info.site_url:
        fields.append(("url", f"{{{info.site_url}}}"))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {value}" for name, value in fields)
    return f"@misc{{specdec-exactly,\n{body}\n}}"


# What must not appear as itself in JSON inside a <script> element: "<" could start "</script>" or "<!--", which
# changes how the HTML parser reads the rest of the page; ">" and "&" are escaped likewise for any other context;
# U+2028 and U+2029 end a line in older JavaScript. JSON's own escape keeps the data the same.
_SCRIPT_ESCAPES = MappingProxyType({ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})


def json_for_script(data: Any) -> Markup:
    """JSON inert inside <script type="application/json">: no "<", ">", "&", U+2028 or U+2029 as itself (each as
    \\u003c and the like), so nothing in the data can end the element or change how the page parses."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return Markup(text.translate(_SCRIPT_ESCAPES))
