"""Hostile and careless inputs (issue 12): each is refused with one line naming the user's file and place, exit 2.

Every attack here is made in a copy of the project and run through the real command line, in this
process (main()) where that is enough and in a fresh process where the failure mode was a hang or
a crash of the interpreter. The contract each test checks is the README's: one line
`error: FILE: PLACE: PROBLEM` that names the file the person wrote, never one of ours, no
traceback, exit status 2, and the previous build/ left exactly as it was.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.__main__ import main

BUILD_MARKER = "a previous build\n"


def one_line_error(err: str, names: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    line = lines[0]
    assert line.startswith("error: ") and names in line, line[:500]
    assert "generator/" not in line and "Traceback" not in line and ".py" not in line, line[:500]
    assert len(line) < 600, f"the message grew with the input: {len(line)} characters"
    return line


def cli(root: Path, monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    code = main(list(argv))
    return code, capsys.readouterr().err


def refuses(root: Path, monkeypatch, capsys, names: str, *argv: str) -> str:
    """Run a command that must fail; the previous build/ must be untouched."""
    build = root / "build"
    build.mkdir(exist_ok=True)
    (build / "marker.txt").write_text(BUILD_MARKER)
    code, err = cli(root, monkeypatch, capsys, *(argv or ("build",)))
    assert code == 2, err[:2000]
    assert sorted(p.name for p in build.iterdir()) == ["marker.txt"]
    return one_line_error(err, names)


HANG_GUARD = 600  # seconds: only so that a build that never answers fails the test instead of hanging the suite


def fresh_process(root: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", *argv],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def profiles(root: Path) -> dict:
    return json.loads((root / "data" / "profiles.v1.json").read_text(encoding="utf-8"))


def save_profiles(root: Path, raw: dict) -> None:
    (root / "data" / "profiles.v1.json").write_text(json.dumps(raw, indent=2, ensure_ascii=False), encoding="utf-8")


# --- item 1: YAML alias bombs -------------------------------------------------------------------


def billion_laughs(levels: int = 9) -> str:
    """A flow sequence of nested anchors, each level nine aliases of the one before: 9^9 leaves from ~2.5 KB."""
    parts = ['&l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    parts += [f"&l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "[" + ", ".join(parts) + "]"


def test_an_alias_bomb_as_the_site_title_is_refused_at_once_without_expanding_it(project):
    edit(project / "data" / "site.yaml", "title: Speculative decoding, exactly", "title: " + billion_laughs())
    assert len(billion_laughs()) < 3000
    done = fresh_process(project, "build")  # before the fix this grew past 2 GB and never answered
    assert done.returncode == 2, done.stderr[:2000]
    line = one_line_error(done.stderr, "data/site.yaml")
    assert line.startswith("error: data/site.yaml: line ")  # named as the person knows it, not by absolute path
    assert "alias" in line and "title" in line
    assert not (project / "build").exists()


def test_an_alias_bomb_in_a_page_front_matter_is_refused_at_once(project):
    page = project / "site_src" / "pages" / "cost.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("---\n", "---\nnav_title: " + billion_laughs() + "\n", 1), encoding="utf-8")
    done = fresh_process(project, "build")
    assert done.returncode == 2, done.stderr[:2000]
    line = one_line_error(done.stderr, "site_src/pages/cost.md: line 2")
    assert "alias" in line


# --- item 5: every bad input names the user's file and place -------------------------------------


def test_a_byte_that_is_not_utf8_in_site_yaml_is_named_by_line_and_column(project, monkeypatch, capsys):
    path = project / "data" / "site.yaml"
    path.write_bytes(path.read_bytes().replace(b"exactly", b"exactl\xff", 1))
    line = refuses(project, monkeypatch, capsys, "data/site.yaml: line 3, column ")
    assert "not UTF-8" in line


def test_a_control_character_in_yaml_is_named_by_line_and_column(project, monkeypatch, capsys):
    """PyYAML refuses such a character while its loader is being made: that, too, is one line, not a traceback."""
    path = project / "data" / "site.yaml"
    path.write_bytes(path.read_bytes().replace(b"exactly", b"exact\x01y", 1))
    line = refuses(project, monkeypatch, capsys, "data/site.yaml: line 3, column ")
    assert "unacceptable character #x0001" in line
    page = project / "site_src" / "pages" / "limits.md"
    page.write_text(page.read_text(encoding="utf-8").replace("title:", "title: \x07", 1), encoding="utf-8")
    path.write_bytes(path.read_bytes().replace(b"exact\x01y", b"exactly", 1))
    assert "site_src/pages/limits.md: line 2, column " in refuses(
        project, monkeypatch, capsys, "site_src/pages/limits.md"
    )


def test_a_page_that_is_not_text_is_named(project, monkeypatch, capsys):
    (project / "site_src" / "pages" / "limits.md").write_bytes(b"---\ntitle: x\n---\n\x89PNG\r\n\x1a\n\x00\xff\xfe")
    line = refuses(project, monkeypatch, capsys, "site_src/pages/limits.md: line 4")
    assert "not UTF-8" in line


def test_a_recursive_macro_in_a_page_is_named_by_page_and_line(project, monkeypatch, capsys):
    page = project / "site_src" / "pages" / "limits.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}\n", encoding="utf-8"
    )
    line = refuses(project, monkeypatch, capsys, "site_src/pages/limits.md: line ")
    assert "the page asks for more memory or deeper calls than a page may use" in line, line
    assert "RecursionError" not in line  # the reader's words, not Python's


def test_a_profiles_file_validate_calls_ok_is_one_the_build_accepts(project, monkeypatch, capsys):
    """Changing the divergent draft's third proposal leaves no rejection in any authored round: the
    build used to fail on an assert in context.py while validate said ok; now both refuse it alike."""
    raw = profiles(project)
    raw["drafts"][1]["proposals"][2] = "sat"
    save_profiles(project, raw)
    from_validate = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: drafts", "validate")
    from_build = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: drafts")
    assert "no draft's authored round shows" in from_validate
    assert from_build.endswith(from_validate.split("data/profiles.v1.json", 1)[1])


def test_a_first_worked_round_with_no_draw_in_its_first_three_frames_is_refused(project, monkeypatch, capsys):
    """The stepper opens on the first draft's worked round and promises a check decided by a draw there: with
    the aligned draft proposing "cat" at position 2 (kept outright) every early check is certain."""
    raw = profiles(project)
    raw["drafts"][0]["proposals"][1] = "cat"
    save_profiles(project, raw)
    from_validate = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: drafts[0]", "validate")
    from_build = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: drafts[0]")
    assert "uniform draw within its first 3 frames" in from_validate
    assert from_build.endswith(from_validate.split("data/profiles.v1.json", 1)[1])


def test_validate_and_build_agree_on_the_shipped_profiles(project, monkeypatch, capsys):
    code, err = cli(project, monkeypatch, capsys, "validate")
    assert code == 0 and not err


def test_a_json_array_nested_100000_deep_is_one_line_from_validate(project):
    (project / "data" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    done = fresh_process(project, "validate", "data/deep.json")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "nested more than" in one_line_error(done.stderr, "data/deep.json: line 1, column ")


RANGES = {
    "a negative seed": ("  convergence: 20230217", "  convergence: -1", "seeds.convergence"),
    "zero Monte Carlo rounds": ("  rounds: 100000", "  rounds: 0", "monte_carlo.rounds"),
    "zero identity pairs": ("  identity_pairs: 5000", "  identity_pairs: 0", "monte_carlo.identity_pairs"),
    "zero playground rounds": ("  rounds: 20000 ", "  rounds: 0 ", "playground.rounds"),
    "a bandwidth that is not a number": (
        "memory_bandwidth_gb_s: 2039",
        "memory_bandwidth_gb_s: .nan",
        "roofline.memory_bandwidth_gb_s",
    ),
    "an infinite peak": ("peak_tflops: 312", "peak_tflops: .inf", "roofline.peak_tflops"),
    "a zero parameter count": ("parameters: 7.0e9", "parameters: 0", "roofline.parameters"),
    "a negative byte width": ("bytes_per_parameter: 2", "bytes_per_parameter: -2", "roofline.bytes_per_parameter"),
    "no positions": ("max_positions: 512", "max_positions: 0", "roofline.max_positions"),
    "parameters whose product overflows": ("parameters: 7.0e9", "parameters: 1.0e300", "roofline.parameters"),
    "a speedup curve a million long": ("max_k: 16", "max_k: 1000000", "speedup.max_k"),
    "a speedup alpha of 1": ("alphas: [1/2, 7/10, 4/5, 9/10]", "alphas: [1/2, 7/10, 4/5, 1]", "speedup.alphas[3]"),
    "no playground draft length": ("  max_k: 8 ", "  max_k: 0 ", "playground.max_k"),
    "check draws above their maximum": ("  check_draws: 3000", "  check_draws: 30000", "playground.check_draws"),
}


@pytest.mark.parametrize("case", sorted(RANGES))
def test_site_yaml_numbers_are_range_checked(case, project, monkeypatch, capsys):
    old, new, place = RANGES[case]
    edit(project / "data" / "site.yaml", old, new)
    refuses(project, monkeypatch, capsys, f"data/site.yaml: {place}: ")


def use_a_corpus_file(project: Path, text: str) -> None:
    """Point playground.prose at data/corpus/prose.txt, a file the person writes, holding text."""
    (project / "data" / "corpus" / "prose.txt").write_text(text, encoding="utf-8")
    site = project / "data" / "site.yaml"
    lines = site.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index("  prose:\n")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    site.write_text(
        "".join(lines[:start] + ["  prose:\n", "    files: corpus/prose.txt\n"] + lines[end:]), encoding="utf-8"
    )


def test_an_empty_corpus_file_is_named(project, monkeypatch, capsys):
    use_a_corpus_file(project, "")
    line = refuses(project, monkeypatch, capsys, "data/corpus/prose.txt: playground.prose: the corpus file is empty")
    assert line.startswith("error: ")


def test_a_short_corpus_file_is_named(project, monkeypatch, capsys):
    use_a_corpus_file(project, "A few words, not enough to learn from.\n")
    line = refuses(project, monkeypatch, capsys, "data/corpus/prose.txt: playground.prose: too short")
    assert "39 characters" in line


# --- item 7: two pages, one output file -------------------------------------------------------


def test_a_page_whose_slug_takes_another_pages_file_is_refused(project, monkeypatch, capsys):
    edit(project / "site_src" / "pages" / "cost.md", "---\n", "---\nslug: index\n")
    line = refuses(project, monkeypatch, capsys, "site_src/pages/cost.md: front matter: slug")
    assert "index.html" in line and "site_src/pages/index.md" in line


def test_a_page_listed_twice_is_refused(project, monkeypatch, capsys):
    edit(project / "data" / "site.yaml", "pages:\n  - index\n", "pages:\n  - index\n  - index\n")
    line = refuses(project, monkeypatch, capsys, "data/site.yaml: pages[1]: ")
    assert "'index' is listed twice" in line


def test_a_slug_that_would_replace_the_404_page_or_leave_the_folder_is_refused(project, monkeypatch, capsys):
    edit(project / "site_src" / "pages" / "cost.md", "---\n", "---\nslug: '404'\n")
    refuses(project, monkeypatch, capsys, "site_src/pages/cost.md: front matter: slug")
    edit(project / "site_src" / "pages" / "cost.md", "slug: '404'", "slug: ../cost")
    refuses(project, monkeypatch, capsys, "site_src/pages/cost.md: front matter: slug")


# --- item 6 (build side): raw HTML in Markdown is an allowlist ----------------------------------

RAW_HTML = {
    "a preconnect": '<link rel="preconnect" href="http://example.com">',
    "a script": "<script>alert(1)</script>",
    "an event handler": '<span onmouseover="alert(1)">x</span>',
    "a style element": "<style>p { color: red }</style>",
    "a style attribute": '<span style="color: red">x</span>',
    "a meta refresh": '<meta http-equiv="refresh" content="0; url=http://example.com/">',
    "an image": '<img src="http://example.com/x.png" alt="x">',
    "a javascript link": '<a href="javascript:alert(1)">x</a>',
    "a link that opens a new tab": '<a href="https://example.com/" target="_blank">x</a>',
}


@pytest.mark.parametrize("case", sorted(RAW_HTML))
def test_raw_html_outside_the_allowlist_is_refused_with_the_page_and_line(case, project, monkeypatch, capsys):
    page = project / "site_src" / "pages" / "limits.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "\nA paragraph.\n\n" + RAW_HTML[case] + "\n", encoding="utf-8")
    line_number = text.count("\n") + 4
    line = refuses(project, monkeypatch, capsys, f"site_src/pages/limits.md: line {line_number}: ")
    assert "not allowed in a page" in line


def test_harmless_raw_html_stays_allowed(project, monkeypatch, capsys, tmp_path):
    page = project / "site_src" / "pages" / "limits.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nPress <kbd>Enter</kbd>, H<sub>2</sub>O, "
        '<abbr title="key-value">KV</abbr>.\n',
        encoding="utf-8",
    )
    code, err = cli(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "<kbd>Enter</kbd>" in (tmp_path / "out" / "limits.html").read_text(encoding="utf-8")


# --- item 9: lenient parsing --------------------------------------------------------------------


def test_a_duplicate_json_key_is_refused(project, monkeypatch, capsys):
    path = project / "data" / "profiles.v1.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"version": 1,', '"version": 1,\n  "version": 1,', 1), encoding="utf-8")
    line = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: line 1, column 1: ", "validate")
    assert "'version' twice" in line


def test_a_duplicate_yaml_key_is_refused(project, monkeypatch, capsys):
    edit(project / "data" / "site.yaml", "profiles: profiles.v1.json\n", "profiles: profiles.v1.json\ntitle: Again\n")
    line = refuses(project, monkeypatch, capsys, "data/site.yaml: line ")
    assert "duplicate key 'title'" in line


def test_a_fraction_in_non_ascii_digits_is_refused(project, monkeypatch, capsys):
    raw = profiles(project)
    raw["target"][0][1] = "\uff11/\uff18"  # fullwidth 1/8, which int() would quietly read as 1/8
    save_profiles(project, raw)
    line = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: target, position 1, token 'cat'", "validate")
    assert "not an exact fraction" in line


def test_tokens_that_differ_only_by_invisible_characters_are_refused(project, monkeypatch, capsys):
    raw = profiles(project)
    raw["tokens"][1] = "c\u200bat"  # "cat" with a zero-width space
    raw["tokens"][3] = "cat"
    save_profiles(project, raw)
    line = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: tokens[1]", "validate")
    assert "U+200B" in line


def test_tokens_that_look_the_same_are_refused(project, monkeypatch, capsys):
    raw = profiles(project)
    raw["tokens"][3] = "\uff43\uff41\uff54"  # fullwidth "cat"
    save_profiles(project, raw)
    line = refuses(project, monkeypatch, capsys, "data/profiles.v1.json: tokens[3]", "validate")
    assert "looks the same as 'cat'" in line


def test_a_negative_generate_chars_is_refused(project, monkeypatch, capsys):
    edit(project / "data" / "site.yaml", "generate_chars: 120", "generate_chars: -5")
    refuses(project, monkeypatch, capsys, "data/site.yaml: playground.generate_chars: must be at least 1")


# --- issue 31, item 3: every path a setting names stays inside the project ---------------------------


def set_corpus(project: Path, kind: str, package: str, files: str) -> None:
    site = project / "data" / "site.yaml"
    lines = site.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index(f"  {kind}:\n")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    new = [f"  {kind}:\n", f"    package: {json.dumps(package)}\n", f"    files: {json.dumps(files)}\n"]
    site.write_text("".join(lines[:start] + new + lines[end:]), encoding="utf-8")


OUTSIDE = {  # what the setting says, and the setting named
    "machine files through an empty package": (("code", "", "/etc/*.conf"), "playground.code.files"),
    "machine files up the tree": (("code", "", "../../../../../../etc/*.conf"), "playground.code.files"),
    "up the tree after a wildcard": (("prose", "", "*/../../../../../etc/*.conf"), "playground.prose.files"),
    "a package glob that climbs out of it": (("code", "attrs", "../../../../*"), "playground.code.files"),
    "an absolute package glob": (("code", "attrs", "/etc/*.conf"), "playground.code.files"),
    "a profiles file of the machine": ("/etc/hostname", "profiles"),
    "a profiles file up the tree": ("../../../../../../etc/hostname", "profiles"),
    "profiles from a device": ("/dev/zero", "profiles"),
}


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_a_setting_that_names_a_path_outside_the_project_is_refused_in_one_line(case, project, monkeypatch, capsys):
    value, place = OUTSIDE[case]
    if place == "profiles":
        edit(project / "data" / "site.yaml", "profiles: profiles.v1.json", f"profiles: {value}")
    else:
        set_corpus(project, *value)
    line = refuses(project, monkeypatch, capsys, f"data/site.yaml: {place}: ")
    assert "outside" in line or "inside the package" in line
    code, err = cli(project, monkeypatch, capsys, "validate")  # validate reads site.yaml as the build does
    assert code == 2
    assert one_line_error(err, f"data/site.yaml: {place}: ") == line


def test_a_corpus_file_linked_out_of_the_project_is_refused_before_it_is_read(project, monkeypatch, capsys):
    (project / "corpus").mkdir()
    (project / "corpus" / "code.txt").symlink_to("/etc/passwd")
    set_corpus(project, "code", "", "../corpus/*.txt")
    line = refuses(project, monkeypatch, capsys, "data/site.yaml: playground.code.files: ")
    assert "/etc/passwd" in line


def test_paths_inside_the_project_are_read_negative_control(small_project, monkeypatch, capsys, tmp_path):
    """A profiles file named by its absolute path inside the project, and a corpus of the project's own files
    reached through a link inside it, build; so does the package glob the shipped settings use."""
    project = small_project  # it trains the prose model on a corpus of its own
    (project / "corpus").mkdir()
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((project / "site_src" / "pages").glob("*.md")))
    (project / "corpus" / "real.txt").write_text(text, encoding="utf-8")
    (project / "corpus" / "code.txt").symlink_to(project / "corpus" / "real.txt")
    set_corpus(project, "prose", "", "../corpus/code.txt")
    profiles_file = project / "data" / "profiles.v1.json"
    edit(project / "data" / "site.yaml", "profiles: profiles.v1.json", f"profiles: {profiles_file}")
    code, err = cli(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / "assets" / "corpus" / "prose.txt").read_text(encoding="utf-8").startswith(text[:200])


SPECIAL_GUARD = 60  # seconds: a read of a FIFO blocks for ever, so a hang fails the test instead of the suite


@pytest.mark.parametrize("where", ["site_src/assets/pipe.css", "data/profiles.v1.json"])
def test_a_fifo_among_the_inputs_is_refused_in_one_line(where, project):
    (project / where).unlink(missing_ok=True)
    os.mkfifo(project / where)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "generator", "build"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=SPECIAL_GUARD,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the build blocked on the FIFO {where} for {SPECIAL_GUARD} s")
    assert done.returncode == 2
    assert one_line_error(done.stderr, f"{where}: is a FIFO, not a regular file") == done.stderr.strip()


def test_a_regular_file_where_the_fifo_was_builds_negative_control(project, monkeypatch, capsys, tmp_path):
    (project / "site_src" / "assets" / "pipe.css").write_text("/* a regular file */\n")
    code, err = cli(project, monkeypatch, capsys, "build", "--out", str(tmp_path / "out"))
    assert code == 0, err
