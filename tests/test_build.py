"""The build as a whole: atomic, reproducible to the byte, cached, and readable when it fails.

Builds run on a copy of the project's inputs and share one cache folder for the session, so only
the tests that must compute everything (the two fresh-process builds) pay for a cold build.
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
from generator.errors import UserError
from generator.site import output as O
from generator.site import pipeline as B
from generator.site import workers as W
from generator.site.cache import ENV_DIR, Cache, canonical, module_closure
from support import ROOT, copy_project, fresh_build


def shared_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "generator-cache"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def unstamped(files: dict[str, bytes]) -> dict[str, bytes]:
    """Pages without the commit and build date: what differs between a git checkout and a copy of it."""
    stamp = re.compile(rb'<p class="colophon"[^>]*>.*?</p>\n?|<meta name="citation_publication_date"[^>]*>\n?'
                       rb'|\n  year +=[^\n]*', re.S)  # the BibTeX entry's year is the build's
    return {name: stamp.sub(b"", data) if name.endswith(".html") else data for name, data in files.items()}


def stat_tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"", p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


class StageCache(Cache):
    """The shared cache without its finished output (the whole site, pages, the numbers' files), so a build runs
    every stage and reuses their results."""

    def load(self, kind, key):
        return None if kind in B.OUTPUT_KINDS else super().load(kind, key)

    def store(self, kind, key, value):
        if kind not in B.OUTPUT_KINDS:
            super().store(kind, key, value)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("project"))
    report = B.build(root, root / "build", cache=Cache(shared_cache_dir(tmp_path_factory)))
    return root, report


@pytest.fixture
def project(tmp_path, site):
    """A fresh copy of the inputs with the module's build already in place as the 'previous' build."""
    root = copy_project(tmp_path / "p")
    shutil.copytree(site[0] / "build", root / "build", copy_function=shutil.copy2)
    return root


def test_a_build_writes_every_listed_page_its_figures_a_manifest_and_a_404_page(site):
    root, report = site
    out = root / "build"
    settings = yaml.safe_load((root / "data" / "site.yaml").read_text())
    slugs = settings["pages"] + settings.get("appendix", [])
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


def test_a_clean_build_in_a_fresh_process_with_another_hash_seed_is_byte_identical(site, site_dir, tmp_path, tmp_path_factory):
    """The suite's one cross-process determinism check, covering every page and figure: a clean build in a
    new process (its own hash seed, time zone and cache, --clean) against the session's build made in this
    process, and against this module's build of a copy of the project that reused the cache."""
    root = site[0]
    cache = tmp_path / "cache"
    shutil.copytree(shared_cache_dir(tmp_path_factory), cache)  # --clean must ignore it
    env = {**os.environ, "PYTHONHASHSEED": "4242", ENV_DIR: str(cache), "TZ": "Etc/GMT+7"}
    env.pop("SOURCE_DATE_EPOCH", None)
    run = subprocess.run([sys.executable, "-m", "generator", "build", "--clean", "--out", str(tmp_path / "out")],
                         cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert re.search(r"(\d+) figures \(\1 rendered, 0 reused\), analysis computed", run.stdout), run.stdout
    fresh, here, cached = tree(tmp_path / "out"), tree(site_dir), tree(root / "build")
    assert sorted(fresh) == sorted(here) == sorted(cached)
    # The session's site is built from the git checkout, so its pages name the commit and its date; the
    # copies here are outside git and name neither (publish.py). Everything else must match to the byte.
    here, fresh_unstamped = unstamped(here), unstamped(fresh)
    assert [name for name in fresh if fresh_unstamped[name] != here[name]] == []
    assert [name for name in fresh if fresh[name] != cached[name]] == []


def test_listing_source_files_in_another_order_changes_no_byte(site, tmp_path, tmp_path_factory, monkeypatch):
    root = site[0]
    glob, rglob = Path.glob, Path.rglob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: list(reversed(list(glob(self, pattern)))))
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: list(reversed(list(rglob(self, pattern)))))
    report = B.build(root, tmp_path / "out", cache=StageCache(shared_cache_dir(tmp_path_factory)))
    monkeypatch.undo()
    assert not report.site_reused
    assert tree(tmp_path / "out") == tree(root / "build")


def test_a_rebuild_with_nothing_changed_imports_neither_the_analysis_nor_the_figures_nor_jinja(site, tmp_path_factory):
    root = site[0]
    assert fresh_build(root, root / "build", shared_cache_dir(tmp_path_factory), ("site_reused", "rendered"),
                       ("matplotlib", "generator.model.analysis", "generator.model.facts", "generator.render.figure_registry", "jinja2")
                       ) == ([True, 0], [])


def test_a_rebuild_that_must_render_pages_reuses_every_figure_and_the_monte_carlo(site, tmp_path, tmp_path_factory, monkeypatch):
    import generator.model.analysis
    import generator.model.facts
    import generator.render.figure_registry

    def forbidden(*args, **kwargs):
        raise AssertionError("the Monte Carlo ran again or a figure was planned again")

    monkeypatch.setattr(generator.model.analysis, "convergence_suite", forbidden)
    monkeypatch.setattr(generator.model.facts, "build_facts", forbidden)
    monkeypatch.setattr(generator.render.figure_registry, "jobs", forbidden)
    report = B.build(site[0], tmp_path / "out", cache=StageCache(shared_cache_dir(tmp_path_factory)))
    assert report.facts_reused and report.rendered == 0 and report.reused == report.figures


def test_changing_one_input_redraws_only_the_figure_drawn_from_it(project, tmp_path_factory):
    config = project / "data" / "site.yaml"
    text = config.read_text()
    assert "peak_tflops: 312" in text
    config.write_text(text.replace("peak_tflops: 312", "peak_tflops: 624"))
    before = json.loads((project / "build" / "figures" / "manifest.json").read_text())["figures"]
    report = B.build(project, project / "build", cache=Cache(shared_cache_dir(tmp_path_factory)))
    after = json.loads((project / "build" / "figures" / "manifest.json").read_text())["figures"]
    assert not report.facts_reused and report.rendered == 1 and report.reused == report.figures - 1
    changed = sorted(n for n in after if after[n]["inputs"]["inputs_sha256"] != before[n]["inputs"]["inputs_sha256"])
    assert changed == ["roofline"]
    assert after["roofline"]["sha256"] != before["roofline"]["sha256"]


def test_a_new_draft_step_reprices_the_playground_and_reruns_no_monte_carlo_identity_check_or_playground_round(
        project, tmp_path_factory, monkeypatch):
    import generator.model.analysis
    import generator.playground

    def forbidden(*args, **kwargs):
        raise AssertionError("recomputed something the draft step does not change")

    path = project / "data" / "profiles.v1.json"
    text = path.read_text()
    assert '"draft_step": "1/10"' in text
    path.write_text(text.replace('"draft_step": "1/10"', '"draft_step": "1/9"'))
    for name in ("convergence_suite", "random_identity_pairs"):
        monkeypatch.setattr(generator.model.analysis, name, forbidden)
    for name in ("build_playground", "build_kind"):
        monkeypatch.setattr(generator.playground, name, forbidden)
    report = B.build(project, project / "build", cache=Cache(shared_cache_dir(tmp_path_factory)))
    assert not report.facts_reused
    numbers = json.loads((project / "build" / "numbers.json").read_text())["profiles"]
    assert all(p["speedup"] != "0" for p in numbers)


def test_the_cache_key_tells_a_fraction_from_a_float_and_from_text():
    from fractions import Fraction
    keys = {canonical(v) for v in (Fraction(1, 2), 0.5, "1/2", [Fraction(1, 2)], (Fraction(1, 2),))}
    assert len(keys) == 4  # a list and a tuple of the same values are the same input


def test_the_analysis_key_covers_every_module_the_facts_import_even_indirectly():
    assert {"model.facts", "model.analysis", "model.engine", "model.profiles", "model.config"} <= set(B.FACTS_MODULES)
    assert "playground.ngram" in module_closure("playground")  # a subpackage's own relative imports


def test_the_figure_key_changes_when_the_drawing_code_changes(monkeypatch):
    stage = W.FigureStage(Cache(None), workers=1)
    from generator.model.facts import FigureRef

    ref = FigureRef("roofline", "site", None, "roofline", "roofline", "inputs")
    before = stage.key(ref)
    monkeypatch.setattr(W, "source_digest", lambda *modules: "edited")
    assert W.FigureStage(Cache(None), workers=1).key(ref) != before


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
            dataclasses.replace(j, ref=dataclasses.replace(j.ref, inputs="broken"),
                                kwargs={**j.kwargs, "rates": [("x", ["not a number"])]})
            if j.name == "acceptance" else j
            for j in jobs(facts)
        )

    monkeypatch.setattr(registry, "jobs", broken)
    monkeypatch.setattr(B, "figure_plan", lambda config, facts, cache: tuple(j.ref for j in broken(facts)))
    return "generator/render/figures.py: line"


def _break_analysis(root: Path, monkeypatch) -> str:
    import generator.model.facts

    def boom(*args, **kwargs):
        raise ZeroDivisionError("no rounds")

    monkeypatch.setattr(B, "facts_key", lambda config: "never-cached")
    monkeypatch.setattr(generator.model.facts, "build_facts", boom)
    return "generator/site/pipeline.py: line"


@pytest.mark.parametrize("breakage", ["bad data", "a template error", "a figure that raises", "an unexpected exception"])
def test_a_failing_build_names_the_file_and_leaves_the_previous_build_exactly_as_it_was(breakage, project, tmp_path_factory, monkeypatch):
    out = project / "build"
    before = stat_tree(out)
    breakers = {"bad data": lambda: _break_data(project), "a template error": lambda: _break_template(project),
                "a figure that raises": lambda: _break_figure(project, monkeypatch),
                "an unexpected exception": lambda: _break_analysis(project, monkeypatch)}
    where = breakers[breakage]()
    with pytest.raises(UserError) as failure:
        B.build(project, out, cache=StageCache(shared_cache_dir(tmp_path_factory)), workers=1)
    message = str(failure.value)
    assert where in message and "\n" not in message
    assert stat_tree(out) == before
    assert sorted(p.name for p in project.iterdir()) == ["build", "data", "site_src"]


def test_the_command_line_reports_a_failed_build_in_one_line_and_exits_2(project, tmp_path_factory):
    _break_data(project)
    before = stat_tree(project / "build")
    env = {**os.environ, ENV_DIR: str(shared_cache_dir(tmp_path_factory))}
    done = subprocess.run([sys.executable, "-m", "generator", "build"], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "profiles.v1.json" in lines[0]
    assert stat_tree(project / "build") == before


def test_the_summary_names_pages_figures_and_the_time_of_each_stage(site, tmp_path, tmp_path_factory):
    env = {**os.environ, ENV_DIR: str(shared_cache_dir(tmp_path_factory))}
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--out", str(tmp_path / "out")],
                          cwd=site[0], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"built \S+: \d+ pages, \d+ figures.*load \d+\.\d\ds.*write \d+\.\d\ds; \d+\.\d\ds in all\n", done.stdout)
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


def test_staging_writes_in_parts_and_makes_nothing_before_its_first_write(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("keep me")
    refused = O.Staging(docs)
    assert not refused.replaceable() and sorted(p.name for p in tmp_path.iterdir()) == ["docs"]
    refused.discard()  # nothing to drop
    O.write_atomically({"index.html": b"old", "figures/manifest.json": b"{}"}, tmp_path / "out")
    staging = O.Staging(tmp_path / "out")
    staging.write({"figures/manifest.json": b"{}", "figures/a.svg": b"<svg/>"})  # what is ready first
    assert (tmp_path / "out" / "index.html").read_bytes() == b"old"  # out untouched until commit
    staging.commit({"index.html": b"new", "figures/manifest.json": b"{}", "figures/a.svg": b"<svg/>"})
    assert tree_of(tmp_path / "out") == {"index.html": b"new", "figures/manifest.json": b"{}", "figures/a.svg": b"<svg/>"}
    dropped = O.Staging(tmp_path / "out")
    dropped.write({"index.html": b"never"})
    dropped.discard()  # a build that failed after writing some files
    assert (tmp_path / "out" / "index.html").read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "out"]  # negative control of the listing above


def tree_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_killed_builds_staging_folder_is_removed_by_the_next_build(tmp_path):
    dead = tmp_path / f".out-new-{2 ** 22 + 7}-abc"  # above Linux's largest pid: that process cannot exist
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
        self.path = self.path[len("/repo"):]
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


def test_a_new_figure_is_a_drawing_function_a_registry_entry_and_a_page_line(project, tmp_path, tmp_path_factory, monkeypatch):
    """Adding a figure touches figures.py, figure_registry.py and the page that shows it, nothing else:
    the entry below reuses a drawing function, the page names the figure through the views, and the
    build draws it, the manifest lists it and check finds it shown."""
    import generator.render.figure_registry as registry
    from generator.commands.check import check_site

    def inputs(facts):
        return {"labels": [f"position {i}" for i in range(1, facts.k + 1)],
                "rates": [(p.name, list(p.accept_rates)) for p in facts.profiles]}

    entry = registry.FigureSpec("acceptance-again", "acceptance_bars", "site", inputs)
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, entry))
    # the plan is cached by the registry's source, which a monkeypatch does not change: plan afresh
    monkeypatch.setattr(B, "figure_plan", lambda config, facts, cache: tuple(j.ref for j in registry.jobs(facts)))
    page = project / "site_src" / "pages" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + '\n{{ widget("figure", name=site.figure["acceptance-again"]) }}\n',
                    encoding="utf-8")
    # and no finished output either, which is kept by the inputs' content, not by a monkeypatched registry
    report = B.build(project, tmp_path / "site", cache=StageCache(shared_cache_dir(tmp_path_factory)))
    assert report.rendered == 1
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


HELPER_SCRIPT = """
import os, sys
import generator.site.pipeline as B
import generator.site.workers as W
from generator.site.cache import Cache
stage = W.FigureStage(Cache(None), workers=2)
try:
    ok, bad, dead = stage.helper(pow, 2, 10), stage.helper(int, "x"), stage.helper(os._exit, 3)
    assert ok is not None, "a fresh process with no thread must fork its helpers"
    assert ok.result() == 1024
    try:
        bad.result()
    except ValueError:
        pass
    else:
        sys.exit("the helper's ValueError was not raised here")
    try:
        dead.result()
    except B.BuildError as exc:
        print(exc)
finally:
    stage.close()
"""


def test_a_helper_process_returns_its_result_raises_its_error_and_reports_its_death():
    """The playground trains in helper processes on a cold build: each outcome comes back as if run here.
    Run in a fresh process: forking is only done where no other thread runs, which a test session cannot promise."""
    run = subprocess.run([sys.executable, "-c", HELPER_SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "ended without its result (exit status 3)" in run.stdout


def test_a_build_freezes_what_is_loaded_while_it_runs_and_leaves_the_collector_as_it_found_it(tmp_path, monkeypatch):
    """What is loaded when a build starts is frozen for its duration (full collections skip it), and given back
    to the collector afterwards, even when the build fails, so that serve and a test session collect it again;
    objects a caller froze itself stay frozen."""
    import gc

    seen = []

    def failing(*args):
        seen.append(gc.get_freeze_count())
        raise UserError("stop")

    monkeypatch.setattr(B, "_build", failing)
    gc.unfreeze()
    with pytest.raises(UserError):
        B.build(ROOT, tmp_path / "out", cache=Cache(tmp_path / "cache"), workers=1)
    assert seen[0] > 0 and gc.get_freeze_count() == 0
    gc.freeze()  # the caller's own: left alone (unfrozen, the count would be 0)
    try:
        with pytest.raises(UserError):
            B.build(ROOT, tmp_path / "out", cache=Cache(tmp_path / "cache"), workers=1)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_library_versions_are_read_off_the_metadata_header_as_importlib_metadata_reads_them(tmp_path):
    """installed() reads a library's Version from its METADATA header alone (not the whole file): the same as
    importlib.metadata for every library the key names; a header without one, or a Version line in the body,
    gives nothing (importlib.metadata then says)."""
    from importlib import metadata

    for lib in B.LIBRARIES:
        try:
            expected = metadata.version(lib)
        except metadata.PackageNotFoundError:
            expected = "absent"
        assert B.installed(lib)[0] == expected, lib
    header = tmp_path / "METADATA"
    header.write_text("Metadata-Version: 2.1\nName: x\nVersion: 1.2.post3\n\nVersion: 9\n", encoding="utf-8")
    assert B._header_version(str(header)) == "1.2.post3"
    header.write_text("Metadata-Version: 2.1\nName: x\n\nVersion: 9\n", encoding="utf-8")
    assert B._header_version(str(header)) is None
    assert B._header_version(str(tmp_path / "missing")) is None
