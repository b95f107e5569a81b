"""`python -m generator VERB`: parse the command line and hand it to one module under commands/."""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from . import __version__
from .errors import UserError

VERBS = {
    "validate": "check a profiles file and report the first problem in it",
    "numbers": "print each draft profile's exact acceptance rates, round lengths and speedup",
    "build": "build the site into build/",
    "serve": "serve the site on 127.0.0.1, rebuilding and reloading the page when a source changes",
    "check": "check a built site: links, anchors, assets, HTML, alt text, nothing from another origin",
    "compare": "write a review page of the figures and page text that differ between two builds",
    "bench": "time cold, no-change, one-page-edit and one-number-edit builds, as ratios to mkdocs when installed",
}


def parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """Every verb is listed, but only the chosen one's module is imported: a rebuild should not pay for numpy."""
    top = argparse.ArgumentParser(prog="python -m generator", description="Build the speculative decoding explainer.")
    top.add_argument("--version", action="version", version=f"specdec-explainer {__version__}")
    sub = top.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, help_text in VERBS.items():
        p = sub.add_parser(verb, help=help_text, description=help_text)
        if verb == chosen:
            importlib.import_module(f".commands.{verb}", __package__).add_arguments(p)
    return top


def one_line(message: str) -> str:
    """The message on one line, naming files in the working directory as the person typed them (data/site.yaml)."""
    here = os.path.join(os.getcwd(), "")
    return " ".join(message.replace(here, "").split("\n"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((a for a in argv if not a.startswith("-")), None)
    args = parser(chosen if chosen in VERBS else None).parse_args(argv)
    module = importlib.import_module(f".commands.{args.verb}", __package__)
    try:
        return module.run(args)
    except UserError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def exit_process(status: int) -> None:
    """End the process the way sys.exit would, without taking apart what the command made: the OS frees it.
    The interpreter's own shutdown walks and frees every object (about 0.15 s after a cold build; 0.02 s
    with the heap frozen first). Where another thread still runs, its shutdown joins it: sys.exit then."""
    gc.freeze()  # should the plain exit below run, its last collections skip these objects
    threading = sys.modules.get("threading")  # not imported: no other thread was started
    if isinstance(status, int) and (threading is None or threading.active_count() == 1):
        import atexit

        atexit._run_exitfuncs()  # what sys.exit would run: the pools' and helpers' clean-up, logging's flush
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed or broken stream: the plain exit reports it as usual
            sys.exit(status)
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    exit_process(main())
