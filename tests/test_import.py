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


def _names_imported_from_toolkit(source: str) -> set[str]:
    import ast

    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return set()
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "toolkit" and node.level == 0 for alias in node.names}


def test_the_top_level_is_what_the_course_teaches_and_every_chapter_finds_its_names():
    from pathlib import Path

    root = Path(toolkit.__file__).resolve().parent.parent
    assert 30 <= len(toolkit.__all__) <= 40  # the rest stays importable from its own module
    used: dict[str, set[str]] = {}
    for notebook in [*root.glob("notebooks/*.ipynb"), *root.glob("exercises/*.ipynb"), *root.glob("solutions/*.ipynb")]:
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                for name in _names_imported_from_toolkit("".join(cell["source"])):
                    used.setdefault(name, set()).add(notebook.name)
    submodules = {p.stem for p in (root / "toolkit").glob("*.py")} | {p.parent.name for p in (root / "toolkit").glob("*/__init__.py")}
    missing = {name: sorted(where) for name, where in used.items() if name not in toolkit.__all__ and name not in submodules}
    assert missing == {}
