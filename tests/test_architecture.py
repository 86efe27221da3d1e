"""ARCHITECTURE.md matches the code: every module is on the map, and imports follow the stated order."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def stated_order() -> list[set[str]]:
    """The groups of `a, b → c → ...` after "in this order:" in ARCHITECTURE.md."""
    line = re.search(r"in this order:\s*`([^`]+)`", DOC).group(1)
    return [{name.strip() for name in group.split(",")} for group in line.split("→")]


def runtime_imports(path: Path) -> set[str]:
    """Toolkit modules `path` imports (from .x / from . import x), leaving out `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and "TYPE_CHECKING" in ast.unparse(block.test) for node in ast.walk(block)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and id(node) not in skipped:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_every_toolkit_module_is_on_the_map():
    modules = {p.stem for p in (ROOT / "toolkit").glob("*.py") if not p.stem.startswith("__")}
    packages = {p.name for p in (ROOT / "toolkit").iterdir() if (p / "__init__.py").exists()}
    for name in modules:
        assert f"toolkit/{name}.py" in DOC, f"ARCHITECTURE.md does not mention toolkit/{name}.py"
    for name in packages:
        assert f"toolkit/{name}/" in DOC, f"ARCHITECTURE.md does not mention toolkit/{name}/"
    placed = set().union(*stated_order())
    assert (modules | packages) - {"viz", "widgets", "check"} <= placed


def test_modules_import_only_what_comes_before_them_in_the_stated_order():
    groups = stated_order()
    rank = {name: i for i, group in enumerate(groups) for name in group}
    for name, level in rank.items():
        path = ROOT / "toolkit" / f"{name}.py"
        if not path.exists():
            path = ROOT / "toolkit" / name / "__init__.py"
        if not path.exists():
            continue
        for imported in runtime_imports(path):
            if imported in rank:
                assert rank[imported] < level or imported == name, f"{name} imports {imported}, which comes later"
