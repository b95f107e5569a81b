"""No module-level mutable state anywhere in generator/: after two whole builds in one process, every
module's globals are constants (numbers, strings, tuples, frozensets, read-only mappings), functions,
classes or modules. A dict, list or set at module level is state one build can leave to the next (serve and
the tests build many times in one process). functools caches of pure functions (a font file loaded, a
loader class made) are not counted: their results depend on their arguments alone."""

import collections
import importlib
import pkgutil
import types

import generator
from generator.site.cache import Cache
from generator.site.pipeline import build

MUTABLE = (dict, list, set, bytearray, collections.deque)


def mutable_globals(module: types.ModuleType) -> list[str]:
    found = []
    for name, value in vars(module).items():
        if name.startswith("__") and name.endswith("__"):
            continue
        if isinstance(value, MUTABLE) and not isinstance(value, types.MappingProxyType):
            found.append(f"{module.__name__}.{name}: {type(value).__name__}")
    return found


def all_modules() -> list[types.ModuleType]:
    names = [info.name for info in pkgutil.walk_packages(generator.__path__, "generator.")]
    return [importlib.import_module(name) for name in sorted(names)]


def test_after_a_build_every_module_holds_only_constants(small_project, tmp_path):
    modules = all_modules()
    assert len(modules) > 30
    build(small_project, tmp_path / "out", cache=Cache(tmp_path / "cache"))
    build(small_project, tmp_path / "out", cache=Cache(tmp_path / "cache"))  # a second build in the same process
    assert (tmp_path / "out" / "index.html").is_file()
    assert [found for module in modules for found in mutable_globals(module)] == []


def test_the_check_sees_a_module_dict_a_list_and_a_set_negative_control():
    probe = types.ModuleType("probe")
    probe.MEMO, probe.SEEN, probe.NAMES = {}, [], {"a"}
    probe.FROZEN, probe.KEYS, probe.ROWS = types.MappingProxyType({}), frozenset({"a"}), ("a",)
    assert mutable_globals(probe) == ["probe.MEMO: dict", "probe.SEEN: list", "probe.NAMES: set"]
