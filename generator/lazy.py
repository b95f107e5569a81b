"""numpy imported at its first use, so a build that only renders a page again never pays for it."""
from __future__ import annotations

from typing import Any


def lazy_numpy(namespace: dict[str, Any]) -> Any:
    """A stand-in for numpy in the module whose `globals()` is `namespace`: its first attribute access
    imports numpy and puts it in that module's globals as `np`, so later uses cost nothing extra.

    A build that only renders a page again unpickles the facts, whose classes live in the modules that
    use this, without importing numpy."""

    class _LazyNumpy:
        def __getattr__(self, name: str) -> Any:
            import numpy

            namespace["np"] = numpy
            return getattr(numpy, name)

    return _LazyNumpy()
