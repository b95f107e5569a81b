"""Gates that read the built files without a browser: valid HTML, links, security headers, page weight.

The Nu HTML checker runs once over every page in a single JVM, since starting Java costs more
than checking ten pages. No checker rule is disabled; its CSP "info warnings" are not errors and
are left out by --errors-only (run over file:// URLs, every relative asset looks cross-origin to it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator.commands.check import LOADING_RELS, check_site, read_report
from quality_support import VNU, WEIGHT_ROWS, is_playground, need_java, need_node_modules, page_names

KB = 1000
BUDGET = 300 * KB
PLAYGROUND_BUDGET = 1500 * KB


@pytest.fixture(scope="module")
def vnu_messages(site) -> dict[str, list[str]]:
    java, jar = need_java(), need_node_modules(VNU)
    pages = [str(site / name) for name in page_names(site)]
    run = subprocess.run(
        [java, "-jar", str(jar), "--errors-only", "--format", "json", *pages],
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        messages = json.loads(run.stderr or run.stdout)["messages"]
    except ValueError:
        pytest.fail(f"vnu gave no JSON (exit {run.returncode}): {run.stderr[:2000]}")
    by_page: dict[str, list[str]] = {}
    for m in messages:
        url = m.get("url", "?")
        path = Path(url.removeprefix("file:").lstrip("/")) if url.startswith("file:") else None
        name = (
            path.relative_to(site.relative_to("/")).as_posix()
            if path and site.relative_to("/") in path.parents
            else url
        )
        by_page.setdefault(name, []).append(
            f"line {m.get('lastLine', '?')}: {m['type']}: {m['message']} [{m.get('extract', '').strip()[:100]}]"
        )
    return by_page


def test_every_page_is_valid_html_to_the_nu_checker(vnu_messages, page_name):
    assert not vnu_messages.get(page_name), f"{page_name}:\n" + "\n".join(vnu_messages[page_name])


def test_the_checker_reported_nothing_about_files_that_are_not_pages(vnu_messages, site):
    assert set(vnu_messages) <= set(page_names(site)), vnu_messages


def test_every_internal_link_anchor_and_asset_resolves(site):
    problems = check_site(site)
    assert not problems, "\n".join(map(str, problems))


# --- security: what a static host can still promise -------------------------------------------


class SecurityParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.csp: list[str] = []
        self.loads_before_csp: list[str] = []
        self.handlers: list[str] = []
        self.inline_scripts = 0
        self.unsafe_links: list[str] = []
        self.style_attributes: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.csp.append(a.get("content", ""))
        if not self.csp and (
            tag == "script" or (tag == "link" and set(a.get("rel", "").split()) & LOADING_RELS - {"icon"})
        ):
            self.loads_before_csp.append(tag)
        self.handlers += [f"<{tag} {k}>" for k in a if re.fullmatch(r"on[a-z]+", k)]
        if "style" in a:
            self.style_attributes.append(f"<{tag} style={a['style'][:40]!r}>")
        if tag == "script" and "src" not in a and a.get("type", "text/javascript") in ("text/javascript", "module", ""):
            self.inline_scripts += 1
        external = tag == "a" and re.match(r"(https?:)?//", a.get("href", ""))
        if external and not {"noopener", "noreferrer"} <= set(a.get("rel", "").split()):
            self.unsafe_links.append(a["href"])


def security(site: Path, name: str) -> SecurityParser:
    parser = SecurityParser()
    parser.feed((site / name).read_text(encoding="utf-8"))
    return parser


def directives(csp: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in (s.strip() for s in csp.split(";")) if d}


def test_every_page_declares_a_strict_content_security_policy_first(site, page_name):
    found = security(site, page_name)
    assert len(found.csp) == 1, f"{page_name}: {len(found.csp)} CSP meta tags"
    policy = directives(found.csp[0])
    assert policy.get("default-src") in (["'self'"], ["'none'"]), policy
    scripts = policy.get("script-src", policy["default-src"])
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts, scripts
    assert policy.get("object-src", policy["default-src"]) == ["'none'"] or policy["default-src"] == ["'none'"], policy
    assert not found.loads_before_csp, f"{page_name}: {found.loads_before_csp} load before the CSP meta tag"


def test_no_page_has_inline_event_handlers_or_style_attributes(site, page_name):
    found = security(site, page_name)
    assert not found.handlers, f"{page_name}: {found.handlers}"
    assert not found.style_attributes, f"{page_name}: the CSP's style-src blocks these: {found.style_attributes}"


# GitHub Pages serves 404.html at any depth of the site, where a relative <script src> would itself
# get the 404 page back; so that one page keeps its path-finding script inline, admitted by the
# script's own hash in the CSP, never by 'unsafe-inline'. Every other page runs only files.
INLINE_SCRIPT_BY_HASH = {"404.html"}


def test_no_page_runs_an_inline_script_but_the_404_page_admitted_by_its_hash(site, page_name):
    text = (site / page_name).read_text(encoding="utf-8")
    inline = [
        body
        for attrs, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", text, re.S)
        if "src=" not in attrs and "application/json" not in attrs
    ]
    if page_name not in INLINE_SCRIPT_BY_HASH:
        assert security(site, page_name).inline_scripts == 0 and not inline, f"{page_name}: inline script"
        return
    allowed = directives(security(site, page_name).csp[0]).get("script-src", [])
    for body in inline:
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        assert f"'sha256-{digest}'" in allowed, f"{page_name}: an inline script its CSP does not admit by hash"


def test_every_link_to_another_site_carries_noopener_noreferrer(site, page_name):
    assert not security(site, page_name).unsafe_links


# --- page weight --------------------------------------------------------------------------------


def weight(site: Path, name: str) -> tuple[int, int]:
    files = fetched(site, name)
    return len(files), sum((site / f).stat().st_size for f in files)


def fetched(site: Path, name: str) -> set[str]:
    parser = read_report((site / name).read_text(encoding="utf-8"))
    root = site.resolve()
    todo = [(site / name).resolve()]
    todo += [
        (site / name).parent.joinpath(r.url.split("#")[0].split("?")[0]).resolve()
        for r in parser.refs
        if r.loads and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", r.url)
    ]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or root not in path.parents or not path.is_file():
            continue
        seen.add(path)
        if path.suffix == ".css":
            for m in re.finditer(
                r"url\(\s*['\"]?([^'\")]+)|@import\s+['\"]([^'\"]+)", path.read_text(encoding="utf-8")
            ):
                url = m.group(1) or m.group(2)
                if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//|^#", url):
                    todo.append(path.parent.joinpath(url).resolve())
    # A figure's dark variant (<picture><source media="(prefers-color-scheme: dark)">) replaces its light
    # one: a reader fetches one of the two, so the pair weighs as much as the larger.
    for path in [p for p in seen if p.name.endswith(".dark.svg")]:
        light = path.with_name(path.name[: -len(".dark.svg")] + ".svg")
        if light in seen:
            seen.discard(light if light.stat().st_size <= path.stat().st_size else path)
    return {p.relative_to(root).as_posix() for p in seen}


def test_every_page_stays_within_its_weight_budget(site, page_name):
    budget = PLAYGROUND_BUDGET if is_playground(site, page_name) else BUDGET
    count, size = weight(site, page_name)
    WEIGHT_ROWS.append((page_name, count, size, budget))
    assert size <= budget, f"{page_name}: {size / KB:.1f} KB in {count} files, over its {budget / KB:.0f} KB budget"
