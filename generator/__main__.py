"""`python -m generator VERB`: parse the command line and hand it to one module under commands/."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from types import MappingProxyType

from . import __version__
from .errors import UserError

VERBS = MappingProxyType(
    {
        "validate": "check a profiles file and report the first problem in it",
        "numbers": "print each draft profile's exact acceptance rates, round lengths and speedup",
        "build": "build the site into build/",
        "serve": "serve the site on 127.0.0.1, rebuilding and reloading the page when a source changes",
        "check": "check a built site: links, anchors, assets, HTML, alt text, nothing from another origin",
        "compare": "write a review page of the figures and page text that differ between two builds",
        "bench": "time cold, no-change, one-page-edit and one-number-edit builds against their budgets",
    }
)


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
        status = module.run(args)
        sys.stdout.flush()  # inside the try: a reader that has gone shows here, not at exit
        return status
    except UserError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader closed the pipe (`numbers | head -1`): stop quietly, with the status a Unix tool killed by
        # SIGPIPE reports, and point stdout at nothing so the interpreter's last flush cannot complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
