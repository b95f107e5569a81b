"""The build as a whole: atomic, reproducible to the byte, cached, and readable when it fails.

Builds run on a copy of the project's inputs. The module's build has a cache folder of its own; a test
that rebuilds starts from a copy of that folder (warm_cache), so no test reads what another test wrote.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path

import pytest
import yaml

from generator.commands.build import progress_printer
from generator.digest import canonical
from generator.errors import UserError
from generator.site import output as O
from generator.site import pipeline as B
from generator.site.cache import ENV_DIR, Cache
from support import built_copy, copy_project


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def unstamped(files: dict[str, bytes]) -> dict[str, bytes]:
    """Pages without the commit and build date: what differs between a git checkout and a copy of it."""
    stamp = re.compile(
        rb'<p class="colophon"[^>]*>.*?</p>\n?|<meta name="citation_publication_date"[^>]*>\n?'
        rb"|\n  year +=[^\n]*",
        re.S,
    )  # the BibTeX entry's year is the build's
    return {name: stamp.sub(b"", data) if name.endswith(".html") else data for name, data in files.items()}


def stat_tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"", p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root, cache, report = built_copy(tmp_path_factory.mktemp("site"))
    return root, report, cache


@pytest.fixture
def warm_cache(tmp_path, site) -> Cache:
    """This test's own copy of the cache the module's build filled."""
    shutil.copytree(site[2], tmp_path / "warm-cache")
    return Cache(tmp_path / "warm-cache")


@pytest.fixture
def project(tmp_path, site):
    """A fresh copy of the inputs with the module's build already in place as the 'previous' build."""
    root = copy_project(tmp_path / "p")
    shutil.copytree(site[0] / "build", root / "build", copy_function=shutil.copy2)
    return root


def test_a_build_writes_every_listed_page_its_figures_a_manifest_and_a_404_page(site):
    root, report, _ = site
    out = root / "build"
    settings = yaml.safe_load((root / "data" / "site.yaml").read_text())
    slugs = settings["pages"] + settings.get("beyond", []) + settings.get("appendix", [])
    for slug in slugs:
        assert (out / f"{slug}.html").is_file()
    assert (out / "404.html").is_file() and (out / "numbers.json").is_file()
    entries = json.loads((out / "figures" / "manifest.json").read_text())["figures"]
    assert len(entries) == report.figures > 0 and report.pages == len(slugs)
    for entry in entries.values():
        svg = (out / "figures" / entry["file"]).read_bytes()
        assert hashlib.sha256(svg).hexdigest() == entry["sha256"]
        assert set(entry["inputs"]) == {"function", "inputs_sha256", "code_sha256"}
        assert entry["alt"] and entry["caption"]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".build-")], "a staging folder was left behind"


def test_a_clean_build_in_a_fresh_process_with_another_hash_seed_is_byte_identical(site, site_dir, tmp_path):
    """The suite's one cross-process determinism check, covering every page and figure: a clean build in a
    new process (its own hash seed, time zone and cache, --clean) against the session's build made in this
    process, and against this module's build of a copy of the project that reused the cache."""
    root = site[0]
    cache = tmp_path / "cache"
    shutil.copytree(site[2], cache)  # --clean must ignore it
    env = {**os.environ, "PYTHONHASHSEED": "4242", ENV_DIR: str(cache), "TZ": "Etc/GMT+7"}
    env.pop("SOURCE_DATE_EPOCH", None)
    run = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--clean", "--out", str(tmp_path / "out")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert re.search(r"(\d+) figures \(\1 drawn, 0 reused\), computed: card, convergence", run.stdout), run.stdout
    fresh, here, cached = tree(tmp_path / "out"), tree(site_dir), tree(root / "build")
    assert sorted(fresh) == sorted(here) == sorted(cached)
    # The session's site is built from the git checkout, so its pages name the commit and its date; the
    # copies here are outside git and name neither (publish.py). Everything else must match to the byte.
    here, fresh_unstamped = unstamped(here), unstamped(fresh)
    assert [name for name in fresh if fresh_unstamped[name] != here[name]] == []
    assert [name for name in fresh if fresh[name] != cached[name]] == []


def test_listing_source_files_in_another_order_changes_no_byte(site, tmp_path, warm_cache, monkeypatch):
    root = site[0]
    glob, rglob = Path.glob, Path.rglob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: list(reversed(list(glob(self, pattern)))))
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: list(reversed(list(rglob(self, pattern)))))
    B.build(root, tmp_path / "out", cache=warm_cache)
    monkeypatch.undo()
    assert tree(tmp_path / "out") == tree(root / "build")


def test_a_rebuild_with_nothing_changed_writes_the_same_bytes(site, tmp_path, warm_cache):
    B.build(site[0], tmp_path / "out", cache=warm_cache)
    assert tree(tmp_path / "out") == tree(site[0] / "build")


def figure_files(folder: Path) -> dict[str, bytes]:
    return {name: data for name, data in tree(folder / "figures").items() if name.endswith(".svg")}


def test_changing_one_input_changes_only_the_figure_drawn_from_it(project, warm_cache):
    config = project / "data" / "site.yaml"
    text = config.read_text()
    assert "peak_tflops: 312" in text
    config.write_text(text.replace("peak_tflops: 312", "peak_tflops: 624"))
    before, old = (
        json.loads((project / "build" / "figures" / "manifest.json").read_text())["figures"],
        figure_files(project / "build"),
    )
    B.build(project, project / "build", cache=warm_cache)
    after, new = (
        json.loads((project / "build" / "figures" / "manifest.json").read_text())["figures"],
        figure_files(project / "build"),
    )
    changed = sorted(n for n in after if after[n]["inputs"]["inputs_sha256"] != before[n]["inputs"]["inputs_sha256"])
    assert changed == ["batch-speedup", "roofline"]  # the two figures drawn from the roofline
    assert sorted(name for name in new if new[name] != old[name]) == [
        "batch-speedup.dark.svg",
        "batch-speedup.svg",
        "roofline.dark.svg",
        "roofline.svg",
    ]


def test_a_new_draft_step_reprices_the_speedups_and_leaves_the_monte_carlo_and_playground_as_they_were(
    project, warm_cache
):
    path = project / "data" / "profiles.v1.json"
    text = path.read_text()
    assert '"draft_step": "1/10"' in text
    path.write_text(text.replace('"draft_step": "1/10"', '"draft_step": "1/9"'))
    before, old = json.loads((project / "build" / "numbers.json").read_text()), figure_files(project / "build")
    B.build(project, project / "build", cache=warm_cache)
    after, new = json.loads((project / "build" / "numbers.json").read_text()), figure_files(project / "build")
    assert [p["speedup"] for p in after["profiles"]] != [p["speedup"] for p in before["profiles"]]
    assert [p["expected_tokens"] for p in after["profiles"]] == [p["expected_tokens"] for p in before["profiles"]]
    for kind, measured in after["playground"].items():  # the models and what was measured on them, as they were
        was = before["playground"][kind]
        assert (measured["bits_per_char"], measured["acceptance_k1"]) == (was["bits_per_char"], was["acceptance_k1"])
    kept = [name for name in new if name.startswith(("convergence", "error-vs-samples", "profile-"))]
    assert kept and all(new[name] == old[name] for name in kept)  # drawn from the Monte Carlo and the rows alone
    assert any(new[name] != old[name] for name in new)  # the speedup figures do show the new step


def test_the_cache_key_tells_a_fraction_from_a_float_and_from_text():
    from fractions import Fraction

    keys = {canonical(v) for v in (Fraction(1, 2), 0.5, "1/2", [Fraction(1, 2)], (Fraction(1, 2),))}
    assert len(keys) == 4  # a list and a tuple of the same values are the same input


def _break_data(root: Path) -> str:
    path = root / "data" / "profiles.v1.json"
    raw = json.loads(path.read_text())
    raw["tokens"] = raw["tokens"][:1]
    path.write_text(json.dumps(raw))
    return "profiles.v1.json"


def _break_template(root: Path) -> str:
    path = root / "site_src" / "templates" / "page.html"
    path.write_text(path.read_text() + "\n{% if %}\n")
    return "page.html"


def _break_figure(root: Path, monkeypatch) -> str:
    import dataclasses

    import generator.render.figure_registry as registry

    jobs = registry.jobs

    def broken(facts):
        return tuple(
            dataclasses.replace(
                j,
                ref=dataclasses.replace(j.ref, inputs="broken"),
                kwargs={**j.kwargs, "rates": [("x", ["not a number"])]},
            )
            if j.name == "acceptance"
            else j
            for j in jobs(facts)
        )

    monkeypatch.setattr(registry, "jobs", broken)
    return "generator/render/figures.py: acceptance: acceptance_bars() failed"


def _break_analysis(root: Path, monkeypatch) -> str:
    import generator.model.facts

    def boom(*args, **kwargs):
        raise ZeroDivisionError("no rounds")

    monkeypatch.setattr(generator.model.facts, "build_facts", boom)
    return "generator/site/pipeline.py: line"


@pytest.mark.parametrize(
    "breakage", ["bad data", "a template error", "a figure that raises", "an unexpected exception"]
)
def test_a_failing_build_names_the_file_and_leaves_the_previous_build_exactly_as_it_was(
    breakage, project, warm_cache, monkeypatch
):
    out = project / "build"
    before = stat_tree(out)
    breakers = {
        "bad data": lambda: _break_data(project),
        "a template error": lambda: _break_template(project),
        "a figure that raises": lambda: _break_figure(project, monkeypatch),
        "an unexpected exception": lambda: _break_analysis(project, monkeypatch),
    }
    where = breakers[breakage]()
    with pytest.raises(UserError) as failure:
        B.build(project, out, cache=warm_cache)
    message = str(failure.value)
    assert where in message and "\n" not in message
    assert stat_tree(out) == before
    assert sorted(p.name for p in project.iterdir()) == ["build", "data", "site_src"]


def test_the_command_line_reports_a_failed_build_in_one_line_and_exits_2(project, warm_cache):
    _break_data(project)
    before = stat_tree(project / "build")
    env = {**os.environ, ENV_DIR: str(warm_cache.directory)}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build"], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "profiles.v1.json" in lines[0]
    assert stat_tree(project / "build") == before


def test_the_summary_names_pages_figures_and_the_time_of_each_stage(site, tmp_path, warm_cache):
    env = {**os.environ, ENV_DIR: str(warm_cache.directory)}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(tmp_path / "out")],
        cwd=site[0],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        r"built \S+: \d+ pages, \d+ figures.*load \d+\.\d\ds.*write \d+\.\d\ds; \d+\.\d\ds in all\n", done.stdout
    )
    assert done.stderr == ""  # progress goes to a terminal only


def test_progress_is_drawn_only_on_a_terminal():
    class Terminal(StringIO):
        def isatty(self):
            return True

    assert progress_printer(StringIO())[0] is None
    screen = Terminal()
    show, finish = progress_printer(screen)
    show("figures", 3, 12)
    assert "figures: 3/12" in screen.getvalue()


def test_write_atomically_refuses_to_replace_a_folder_that_is_not_a_build(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="refusing to replace"):
        O.write_atomically({"index.html": b"x"}, docs)
    assert (docs / "notes.txt").read_text() == "keep me"


def tree_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_killed_builds_staging_folder_is_removed_by_the_next_build(tmp_path):
    dead = tmp_path / f".out-new-{2**22 + 7}-abc"  # above Linux's largest pid: that process cannot exist
    dead.mkdir()
    mine = tmp_path / f".out-new-{os.getpid()}-abc"
    mine.mkdir()
    O.write_atomically({"index.html": b"x"}, tmp_path / "out")
    assert not dead.exists() and mine.exists() and (tmp_path / "out" / "index.html").read_bytes() == b"x"


def test_source_date_epoch_fixes_every_file_time(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    O.write_atomically({"index.html": b"x", "figures/a.svg": b"<svg/>"}, tmp_path / "out")
    times = {p.stat().st_mtime for p in [tmp_path / "out", *(tmp_path / "out").rglob("*")]}
    assert times == {1700000000}


def test_the_404_page_loads_no_relative_asset_and_its_csp_allows_exactly_its_inline_script(site):
    page = (site[0] / "build" / "404.html").read_text()
    assert not re.search(r"<link(?! rel=\"icon\" href=\"data:,\">)|<img|<script[^>]+src=|style=", page)
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    first = yaml.safe_load((site[0] / "data" / "site.yaml").read_text())["pages"][0]
    assert f'id="home" href="{first}.html"' in page


class PagesLikeHandler(SimpleHTTPRequestHandler):
    """GitHub Pages for a project site: the build under /repo/, and its 404.html for any missing path."""

    def log_message(self, *args):
        pass

    def send_head(self):
        if not self.path.startswith("/repo/"):
            self.send_error(404)
            return None
        self.path = self.path[len("/repo") :]
        local = Path(self.translate_path(self.path))
        if local.is_file() or (local.is_dir() and (local / "index.html").is_file()):
            return super().send_head()
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return __import__("io").BytesIO(body)


@pytest.mark.browser
def test_the_404_page_links_to_the_site_root_from_any_depth_under_a_project_subpath(site, browser):
    """Drives the browser fixture's chromium (skips locally, fails in CI when it is missing)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(PagesLikeHandler, directory=str(site[0] / "build")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    first = yaml.safe_load((site[0] / "data" / "site.yaml").read_text())["pages"][0]
    try:
        page = browser.new_page()
        try:
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None)
            for missing in ("/repo/nope", "/repo/a/b/c/nope.html", "/repo/deep/er/"):
                response = page.goto(origin + missing)
                assert response.status == 404
                home = page.locator("#home")
                for _ in range(50):  # polled from here: the page's CSP forbids the eval wait_for_function needs
                    if home.get_attribute("href") == f"/repo/{first}.html":
                        break
                    page.wait_for_timeout(100)
                assert home.get_attribute("href") == f"/repo/{first}.html", missing
        finally:
            page.context.close()
        assert not [e for e in errors if "Content Security Policy" in e]
    finally:
        server.shutdown()
        server.server_close()


def test_a_new_figure_is_a_drawing_function_a_registry_entry_and_a_page_line(
    project, tmp_path, warm_cache, monkeypatch
):
    """Adding a figure touches figures.py, figure_registry.py and the page that shows it, nothing else:
    the entry below reuses a drawing function, the page names the figure through the views, and the
    build draws it, the manifest lists it and check finds it shown."""
    import generator.render.figure_registry as registry
    from generator.commands.check import check_site
    from generator.render import figures

    def inputs(facts):
        return {
            "labels": [f"position {i}" for i in range(1, facts.k + 1)],
            "rates": [(p.name, list(p.accept_rates)) for p in facts.profiles],
        }

    entry = registry.FigureSpec("acceptance-again", figures.acceptance_bars, "site", inputs)
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, entry))
    page = project / "site_src" / "pages" / "index.md"
    page.write_text(
        page.read_text(encoding="utf-8") + '\n{{ widget("figure", name=site.figure["acceptance-again"]) }}\n',
        encoding="utf-8",
    )
    B.build(project, tmp_path / "site", cache=warm_cache)
    manifest = json.loads((tmp_path / "site" / "figures" / "manifest.json").read_text())["figures"]
    assert manifest["acceptance-again"]["inputs"]["function"] == "acceptance_bars"
    assert 'src="figures/acceptance-again.svg"' in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert [str(p) for p in check_site(tmp_path / "site")] == []


def test_the_404_page_has_the_site_look_in_an_inline_style_its_csp_allows_by_hash(site):
    page = (site[0] / "build" / "404.html").read_text()
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in page
    assert "prefers-color-scheme: dark" in style and "system-ui" in style
