"""What the test suite costs, per area: one run of the README's test command, its time summed per test file and
per folder. A report, not a test: machines differ, and no timing is ever a test's assertion.

Run: python tests/benchmarks/bench_suite.py [PYTEST ARGS...]   (default: the README's `-n 2 --dist loadgroup`)

Each test's time is its setup, call and teardown as pytest's JUnit report records them, so a module fixture (a
browser, a project built once) counts in the area whose tests use it, and the session's build of the real site
in the area of the first test that asked for it. The wall time of the whole run is printed last: on two
processes the areas add up to about twice it. The issue's budget for the whole `CI=true bash .ci/run` is
5 minutes on a fresh two-core machine.
"""

import collections
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ["-n", "2", "--dist", "loadgroup"]


def area(classname: str) -> tuple[str, str]:
    """("browser", "tests/browser/test_site_browser.py") from a JUnit classname: tests.browser.test_site_browser."""
    parts = classname.split(".")
    if parts[:1] == ["tests"]:
        parts = parts[1:]
    while parts and not parts[-1].startswith("test_"):
        parts.pop()  # a test class inside the module
    module = "tests/" + "/".join(parts) + ".py"
    return (parts[0] if len(parts) > 1 else "tests/ (top level)"), module


def main(args: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", *(args or DEFAULT), f"--junitxml={report}"], cwd=ROOT)
        wall = time.perf_counter() - start
        cases = ET.parse(report).getroot().iter("testcase")
        per_file, per_area, count = collections.Counter(), collections.Counter(), collections.Counter()
        for case in cases:
            folder_name, module = area(case.get("classname", ""))
            seconds = float(case.get("time", 0))
            per_file[module] += seconds
            per_area[folder_name] += seconds
            count[folder_name] += 1
    print(f"\n{'area':28} {'tests':>6} {'seconds':>9}")
    for name, seconds in per_area.most_common():
        print(f"{name:28} {count[name]:>6} {seconds:>9.1f}")
    print(f"\n{'file':60} {'seconds':>9}")
    for name, seconds in per_file.most_common(25):
        print(f"{name:60} {seconds:>9.1f}")
    print(f"\nwall time of the run: {wall:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
