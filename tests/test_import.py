"""Tests for the package surface: importing toolkit stays light, and every public name is documented."""
from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys

import toolkit

HEAVY = ("openai", "httpx2", "matplotlib", "ipywidgets", "jsonschema")


def test_import_toolkit_loads_no_heavy_dependency():
    code = ("import json, sys; import toolkit; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_every_public_name_exists_and_has_its_own_docstring():
    missing = [name for name in toolkit.__all__ if not hasattr(toolkit, name)]
    assert missing == []
    undocumented = []
    for name in toolkit.__all__:
        obj = getattr(toolkit, name)
        if inspect.isclass(obj) or inspect.isroutine(obj):
            doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and (doc or "").startswith(f"{name}("):
                doc = None  # the signature @dataclass writes when there is no docstring
        else:  # a data value (a dict of labels): a module that defines it must explain it in its docstring
            doc = name if _explained_in_a_module(name) else None
        if not doc or not doc.strip():
            undocumented.append(name)
    assert undocumented == []


def _explained_in_a_module(name: str) -> bool:
    return any(name in vars(module) and name in (module.__doc__ or "")
               for module_name, module in list(sys.modules.items())
               if module_name.startswith("toolkit.") and module is not None)


def test_all_lists_unique_names():
    assert len(toolkit.__all__) == len(set(toolkit.__all__))


def test_version_is_set():
    assert isinstance(toolkit.__version__, str) and toolkit.__version__
