"""Found, cited, reused: the site URL and what hangs on it, the social card, the data links, the footer,
and the strict build.

One copy of the project is built twice, without and with GENERATOR_SITE_URL; the planted failures
each edit one page of a fresh copy and run `build` as a user would.
"""

import csv
import io
import json
import os
import re
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator.commands.check import check_site
from generator.model.config import load_config
from generator.render import card as card_module
from generator.render import figure_registry
from generator.site.cache import Cache
from generator.site.pipeline import build
from generator.site.publish import NO_GIT_WARNING, SITE_URL_ENV
from support import ROOT, copy_project, session_cache_copy

URL = "https://example.org/specdec/"


class Head(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.meta, self.links, self.title, self._in_title = {}, {}, "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and (a.get("property") or a.get("name")):
            self.meta[a.get("property") or a.get("name")] = a.get("content")
        elif tag == "link":
            self.links[a.get("rel")] = a.get("href")
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def head(path: Path) -> Head:
    h = Head()
    h.feed(path.read_text(encoding="utf-8"))
    return h


def build_with(root: Path, out: Path, cache_dir: Path, **env) -> Path:
    saved = {k: os.environ.get(k) for k in (SITE_URL_ENV, "SOURCE_DATE_EPOCH")}
    try:
        for k in saved:
            os.environ.pop(k, None)
        os.environ.update(env)
        build(root, out, cache=Cache(cache_dir))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("project"))
    cache = session_cache_copy(tmp_path_factory.mktemp("publish-cache"))
    plain = build_with(root, root / "plain", cache)
    published = build_with(
        root, root / "published", cache, GENERATOR_SITE_URL=URL.rstrip("/"), SOURCE_DATE_EPOCH="1767225600"
    )  # 2026-01-01
    return root, plain, published


def pages_of(root: Path) -> list[str]:
    config = load_config(root / "data" / "site.yaml")
    return [f"{slug}.html" for slug in (*config.pages, *config.beyond, *config.appendix)]


SOCIAL = ("og:title", "og:description", "og:image", "og:url", "twitter:card", "twitter:image")


def test_without_a_site_url_no_page_carries_an_absolute_address_and_there_is_no_sitemap(sites):
    root, plain, _ = sites
    assert not (plain / "sitemap.xml").exists()
    for page in pages_of(root):
        h = head(plain / page)
        assert "canonical" not in h.links and not any(key in h.meta for key in SOCIAL), page
        assert "example.org" not in (plain / page).read_text(encoding="utf-8")
    assert [str(p) for p in check_site(plain)] == []


def test_with_a_site_url_every_page_has_a_canonical_link_and_a_link_preview(sites):
    root, _, published = sites
    for page in pages_of(root):
        h = head(published / page)
        address = URL if page == "index.html" else URL + page
        assert h.links["canonical"] == address and h.meta["og:url"] == address
        assert h.meta["og:title"] == h.title and h.meta["og:description"]
        assert h.meta["og:image"] == URL + "social-card.png" == h.meta["twitter:image"]
        assert (h.meta["og:image:width"], h.meta["og:image:height"]) == ("1200", "630")
        assert h.meta["twitter:card"] == "summary_large_image"
    assert [str(p) for p in check_site(published)] == []


def test_the_sitemap_lists_every_page_by_its_address(sites):
    root, _, published = sites
    text = (published / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>([^<]+)</loc>", text)
    assert locs == [URL if p == "index.html" else URL + p for p in pages_of(root)]
    assert text.count("<lastmod>2026-01-01</lastmod>") == len(locs)


def test_an_invalid_site_url_is_one_line_naming_the_variable(project):
    env = {**os.environ, SITE_URL_ENV: "example.org/no-scheme"}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {SITE_URL_ENV}: must be an absolute http or https address")
    assert done.stderr.count("\n") == 1 and not (project / "out").exists()


def test_site_yaml_sets_the_address_and_the_environment_overrides_it(project, shared_cache):
    site = project / "data" / "site.yaml"
    site.write_text(site.read_text(encoding="utf-8").replace('site_url: ""', "site_url: https://configured.example/x"))
    cache = shared_cache
    configured = build_with(project, project / "a", cache)
    assert head(configured / "index.html").links["canonical"] == "https://configured.example/x/"
    overridden = build_with(project, project / "b", cache, GENERATOR_SITE_URL="https://env.example/")
    assert head(overridden / "index.html").links["canonical"] == "https://env.example/"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_social_card_is_a_1200_by_630_png_drawn_the_same_every_time(sites):
    _, plain, published = sites
    data = (plain / "social-card.png").read_bytes()
    assert png_size(data) == (1200, 630)
    assert data == (published / "social-card.png").read_bytes()
    assert b"tIME" not in data and b"matplotlib" not in data  # no timestamp, no version tag
    rounds = [("A draft", [("the", "accepted"), ("cat", "rejected"), ("mat", "replacement"), ("on", "dropped")])]
    once = card_module.social_card("T", "tagline", rounds)
    assert once == card_module.social_card("T", "tagline", rounds)
    assert once != card_module.social_card(
        "T", "tagline", [("A draft", [("the", "accepted")])]
    )  # it does draw the data


def test_a_line_too_long_for_the_card_shrinks_to_fit_instead_of_running_off_the_edge(monkeypatch):
    from PIL import Image

    long = (
        "A tagline that goes on and on, far longer than any card is wide, so that at its usual size it would not fit."
    )

    def colours_right_of_the_margin() -> set:
        image = Image.open(io.BytesIO(card_module.social_card("T", long, []))).convert("RGB")
        band = image.crop((card_module.RIGHT + 2, 130, card_module.WIDTH, 175))  # the tagline's band
        return {colour for _, colour in band.getcolors()}

    assert colours_right_of_the_margin() == {(0xFB, 0xFA, 0xF7)}  # the background alone
    monkeypatch.setattr(card_module, "fit", lambda text, room: None)
    assert len(colours_right_of_the_margin()) > 1  # the negative control: at its usual size it runs off


def test_the_home_page_title_is_not_doubled(sites, tmp_path):
    from generator.render.pages import load_page

    root, plain, _ = sites
    title = load_config(root / "data" / "site.yaml").title
    assert head(plain / "index.html").title.count(title) == 1
    assert head(plain / "speedup.html").title.endswith(f" · {title}")
    # a page titled like the site (the home page used to be) gets the site's title once
    source = tmp_path / "home.md"
    source.write_text(f"---\ntitle: {title}\n---\nText.\n", encoding="utf-8")
    assert load_page(source).document_title(title) == title
    source.write_text("---\ntitle: Another page\n---\nText.\n", encoding="utf-8")
    assert load_page(source).document_title(title) == f"Another page · {title}"


def test_pages_that_print_numbers_link_to_the_data_and_the_data_is_published(sites):
    root, plain, _ = sites
    linked = set()
    for page in pages_of(root):
        text = (plain / page).read_text(encoding="utf-8")
        m = re.search(r'<p class="data-links">(.*?)</p>', text, re.S)
        if m:
            linked.add(page)
            hrefs = re.findall(r'href="([^"]+)"', m.group(1))
            quoted = ["data/practice.yaml"] if page == "practice.html" else []  # the page that quotes engines
            assert hrefs == ["numbers.json", "numbers.csv", *quoted, "data/profiles.v1.json"]
    sources = {
        f"{p.stem}.html" for p in (root / "site_src" / "pages").glob("*.md") if "{{" in p.read_text(encoding="utf-8")
    }
    assert linked == sources and linked  # every page whose numbers come from the build, and only those
    for name in ("profiles.v1.json", "practice.yaml"):
        assert (plain / "data" / name).read_bytes() == (root / "data" / name).read_bytes()
    numbers = json.loads((plain / "numbers.json").read_text(encoding="utf-8"))["profiles"]
    rows = list(csv.DictReader(io.StringIO((plain / "numbers.csv").read_text(encoding="utf-8"))))
    assert [r["profile"] for r in rows] == [n["id"] for n in numbers]
    for row, n in zip(rows, numbers):
        assert (row["expected_tokens"], row["speedup"]) == (n["expected_tokens"], n["speedup"])
        assert [row[f"accept_rate_position_{i + 1}"] for i in range(len(n["accept_rates"]))] == n["accept_rates"]
        assert [row[f"p_round_length_{i + 1}"] for i in range(len(n["round_length_distribution"]))] == n[
            "round_length_distribution"
        ]


def test_each_figure_links_to_its_svg_and_names_the_function_that_drew_it(sites):
    _, plain, _ = sites
    manifest = json.loads((plain / "figures" / "manifest.json").read_text(encoding="utf-8"))["figures"]
    modules = {spec.function.__name__: spec.function.__module__ for spec in figure_registry.REGISTRY}
    seen = 0
    for page in plain.glob("*.html"):
        for name, body in re.findall(
            r'<figure class="figure" id="figure-([^"]+)">(.*?)</figure>', page.read_text(encoding="utf-8"), re.S
        ):
            assert f'<a href="figures/{name}.svg"' in body
            function = manifest[name]["inputs"]["function"]
            module = modules[function].replace(".", "/")
            assert f"<code>{function}()</code> in <code>{module}.py</code>" in body
            seen += 1
    assert seen >= len(manifest)


def test_the_favicon_is_an_svg_in_the_site_colours(sites):
    _, plain, _ = sites
    assert head(plain / "index.html").links["icon"] == "assets/favicon.svg"
    svg = (plain / "assets" / "favicon.svg").read_text(encoding="utf-8")
    accent = re.search(
        r"--accent:\s*(#[0-9a-f]{6})", (plain / "assets" / "style.css").read_text(encoding="utf-8")
    ).group(1)
    assert svg.startswith("<svg") and accent in svg and "prefers-color-scheme: dark" in svg


def colophon(page: Path) -> str:
    return re.search(r'<p class="colophon"[^>]*>(.*?)</p>', page.read_text(encoding="utf-8"), re.S).group(1)


def test_citation_tags_everywhere_and_the_build_date_from_source_date_epoch(sites):
    root, plain, published = sites
    h = head(published / "speedup.html")
    assert h.meta["citation_title"] and h.meta["citation_author"]
    assert h.meta["citation_publication_date"] == "2026/01/01"
    assert ", built 2026-01-01." in colophon(published / "speedup.html")
    # no git checkout here and no SOURCE_DATE_EPOCH: the clock is never used, so no date at all
    assert "built" not in colophon(plain / "speedup.html") and "licenses/by/4.0" in colophon(plain / "speedup.html")
    assert "citation_publication_date" not in head(plain / "speedup.html").meta


def test_the_footer_names_the_commit_and_two_builds_of_one_commit_are_identical(
    project, tmp_path_factory, shared_cache
):
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    env = {**os.environ, "GIT_COMMITTER_DATE": "2026-02-03T04:05:06Z", "GIT_AUTHOR_DATE": "2026-02-03T04:05:06Z"}
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True, env=env)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    cache = shared_cache
    a = build_with(project, project / "a", cache)
    b = build_with(project, project / "b", tmp_path_factory.mktemp("cold-cache"))
    text = (a / "index.html").read_text(encoding="utf-8")
    assert f'built 2026-02-03 from commit <code title="{commit}">{commit[:12]}</code>' in text
    assert {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()} == {
        p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()
    }


def test_the_footer_says_modified_when_a_tracked_file_differs_from_the_commit(project, shared_cache):
    """A build of a tree with an edit nobody committed must not pass for the commit: "(modified)" follows it.
    Negative control: committed, the same tree builds without the mark."""
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    page = project / "site_src" / "pages" / "limits.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nAn edit nobody committed.\n", encoding="utf-8")
    cache = shared_cache
    dirty = colophon(build_with(project, project / "dirty", cache) / "index.html")
    assert f'from commit <code title="{commit}">{commit[:12]}</code> (modified).' in dirty, dirty
    subprocess.run([*git, "commit", "-qam", "y"], check=True)
    clean = colophon(build_with(project, project / "clean", cache) / "index.html")
    assert "(modified)" not in clean and "from commit <code" in clean, clean


def test_without_git_the_build_warns_once_and_the_footer_shows_the_version_alone(project, tmp_path):
    from generator import __version__

    bin_dir = tmp_path / "bin"  # a PATH with nothing on it, so no git is found; Python is started by its own path,
    bin_dir.mkdir()  # as a link to it would start the base interpreter without the virtual environment's packages
    env = {k: v for k, v in os.environ.items() if k not in ("SOURCE_DATE_EPOCH", SITE_URL_ENV)}
    env.update(PATH=str(bin_dir), PYTHONPATH=str(ROOT))
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # a checkout git would have read
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(tmp_path / "out")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [NO_GIT_WARNING], done.stderr
    footer = colophon(tmp_path / "out" / "index.html")
    assert footer.startswith(f"Version {__version__}. Text, figures and data:"), footer
    assert "commit" not in footer and "built" not in footer


# --- strict build: one planted mistake each ------------------------------------------------------

PLANTED = {
    "a link to a page that does not exist": (
        "See [the cost](no-such-page.html).",
        "broken link 'no-such-page.html': no such file no-such-page.html",
    ),
    "a link to a missing anchor": (
        "See [the cost](cost.html#no-such-heading).",
        "broken link 'cost.html#no-such-heading': cost.html has no element with id 'no-such-heading'",
    ),
    "an unknown LaTeX macro": (r"The ratio $\foo{x} + 1$ is plain.", r"unknown LaTeX macro \foo in $\foo{x} + 1$"),
    "an unresolved footnote": (
        "A claim that needs a source.[^nowhere]",
        "footnote [^nowhere] has no definition (add a line '[^nowhere]: ...')",
    ),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_mistake_fails_the_build_in_one_line_naming_the_page_and_line(case, project):
    planted, message = PLANTED[case]
    page = project / "site_src" / "pages" / "speedup.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    lines.append("")
    lines.append(planted)
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == f"error: {page.relative_to(project)}: line {len(lines)}: {message}\n"
    assert not (project / "out").exists()


def test_footnotes_render_as_linked_notes(project, shared_cache):
    page = project / "site_src" / "pages" / "speedup.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nA claim with a source.[^src]\n\n[^src]: The source, in a note.\n",
        encoding="utf-8",
    )
    out = build_with(project, project / "out", shared_cache)
    text = (out / "speedup.html").read_text(encoding="utf-8")
    assert "[^src]" not in text and 'class="footnotes"' in text and "The source, in a note." in text
    assert [str(p) for p in check_site(out)] == []


def test_the_strict_link_check_has_no_false_alarm_on_the_shipped_site(sites):
    from generator.site.publish import broken_links

    _, plain, published = sites
    for site in (plain, published):
        files = {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}
        assert broken_links(files) == []
        files["index.html"] = files["index.html"].replace(b"</main>", b'<a href="cost.html#nope">x</a></main>')
        assert broken_links(files) == [("index.html", "cost.html#nope", "cost.html has no element with id 'nope'")]


def test_version_is_in_the_footer(sites):
    from generator import __version__

    assert f"Version {__version__}" in (sites[2] / "index.html").read_text(encoding="utf-8")
    assert ROOT.joinpath("CITATION.cff").read_text(encoding="utf-8").count(__version__) == 1


def bibtex_of(site: Path) -> str:
    pages = [p for p in site.glob("*.html") if 'class="bibtex"' in p.read_text(encoding="utf-8")]
    assert len(pages) == 1, pages  # one page, the one with the sources, holds the entry
    return re.search(
        r'class="bibtex"[^>]*><pre><code>(.*?)</code></pre>', pages[0].read_text(encoding="utf-8"), re.S
    ).group(1)


def test_the_sources_page_gives_a_bibtex_entry_that_matches_the_citation_file(sites):
    import yaml

    root, plain, published = sites
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    entry = bibtex_of(published)
    assert entry.startswith("@misc{specdec-exactly,\n") and entry.endswith("\n}")
    assert f"title   = {{{cff['title']}}}" in entry and f"{{{{{cff['authors'][0]['name']}}}}}" in entry
    assert (
        "year    = {2026}" in entry and f"version = {{{cff['version']}}}" in entry and f"url     = {{{URL}}}" in entry
    )
    assert "year" not in bibtex_of(plain) and "url" not in bibtex_of(plain)  # no date, no address: not invented
