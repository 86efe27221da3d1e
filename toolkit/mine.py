"""The student's own toolkit: the pieces written in the chapters and exercises, saved as plain Python files.

A chapter ends its build with one line, ``save("truncate", smart_truncate)``: the definitions of the cell
that defined the function (its imports, functions, classes and constants; not its demo calls) are written
to ``my_toolkit/truncate.py`` in the project folder, a file the student can open and read. ``load()``
imports each saved piece on its own, so one broken file is one broken piece, never a crashed kernel; the
capstone runs the agent with every plug-in point the student filled.

The slots are the road's plug-in points (``ToolExecutor(parse=, truncate=, retry=)`` and
``run_agent(format_message=, evaluate=, check=)``). ``TOOLKIT_MY_DIR`` moves the folder (the test suite
points it at a temporary folder, so running the chapters never touches a student's saved work).
"""
from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import linecache
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

# slot -> where it plugs in (shown to the student)
SLOTS: dict[str, str] = {
    "parse": "ToolExecutor(parse=…)",
    "truncate": "ToolExecutor(truncate=…)",
    "retry": "ToolExecutor(retry=…)",
    "format_message": "run_agent(format_message=…)",
    "evaluate": "run_agent(evaluate=…)",
    "check": "run_agent(check=…)",
}
MY_DIR_ENV = "TOOLKIT_MY_DIR"
CHECK_DEFER_ENV = "TOOLKIT_CHECK_DEFER"  # set by `python -m toolkit.check` while it runs a notebook's cells
_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
         ast.AnnAssign)


def folder() -> Path:
    """Where the pieces are saved: $TOOLKIT_MY_DIR, else my_toolkit/ in the project folder."""
    if os.environ.get(MY_DIR_ENV):
        return Path(os.environ[MY_DIR_ENV])
    project = Path(__file__).resolve().parent.parent
    base = project if (project / "notebooks").is_dir() else Path.cwd()
    return base / "my_toolkit"


def _cell_source(fn: Callable) -> str:
    """The whole source the function was defined in (a notebook cell, or its module file)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise ValueError(f"{fn!r} 不是用 def 写的函数，没法保存它的源代码")
    lines = linecache.getlines(code.co_filename)
    if not lines:
        try:
            return inspect.getsource(fn)
        except (OSError, TypeError) as exc:
            raise ValueError(f"找不到 {fn.__name__} 的源代码（{exc}）：请在笔记本的单元格里用 def 定义它") from None
    return "".join(lines)


def _definitions(source: str) -> str:
    """The top-level imports, defs, classes and assignments of `source`; demo calls and prints left out."""
    tree = ast.parse(source)
    kept = [node for node in tree.body if isinstance(node, _KEPT)]
    return "\n\n".join(ast.get_source_segment(source, node) or ast.unparse(node) for node in kept)


def _missing_names(module_source: str, fn_name: str) -> list[str]:
    """Global names the saved definitions use but neither define nor import (nor are builtins)."""
    tree = ast.parse(module_source)
    defined = set(dir(builtins)) | {"__name__", "__file__"}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            local.update(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                         *([args.vararg] if args.vararg else []),
                                         *([args.kwarg] if args.kwarg else [])])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            local.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            local.update(node.names)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(used - defined - local - {fn_name})


def _unwritten(source: str, name: str) -> bool:
    """Whether function `name` in `source` is still an exercise's stub: its body (after a docstring) is only
    `raise NotImplementedError`."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
                getattr(node.body[0], "value", None), ast.Constant) else node.body
            return (len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None
                    and "NotImplementedError" in ast.unparse(body[0].exc))
    return False


def save(slot: str, fn: Callable) -> Path | None:
    """Save `fn` (and the definitions of the cell it was written in) as the student's piece for `slot`.

    An exercise's function still `raise NotImplementedError` is not saved (one Chinese line says so; None),
    and neither is anything while `python -m toolkit.check` runs the notebook (TOOLKIT_CHECK_DEFER=1: checking
    a notebook, a teacher's class included, never writes a toolkit). Raises ValueError (in Chinese: the student
    called it) for an unknown slot, something that is not a function written with def, or definitions that use
    a name defined in another cell.
    """
    if slot not in SLOTS:
        raise ValueError(f"没有叫 {slot!r} 的位置；可以保存的位置：{', '.join(SLOTS)}")
    if not callable(fn):
        raise ValueError(f"save 的第二个参数应该是函数，收到的是 {type(fn).__name__}")
    if os.environ.get(CHECK_DEFER_ENV) == "1":
        return None
    source = _definitions(_cell_source(fn))
    name = fn.__name__
    if f"def {name}(" not in source and f"class {name}" not in source:
        raise ValueError(f"在 {name} 所在的单元格里找不到它的定义：请把 def {name}(...) 放在单元格的最外层再保存")
    if _unwritten(source, name):
        print(f"○ 没有保存：{name} 还是 raise NotImplementedError。写好、检查全部通过后再运行这一格。")
        return None
    missing = _missing_names(source, name)
    if missing:
        raise ValueError(f"{name} 用到了 {', '.join(missing)}，但它们不在同一个单元格里：把它们挪到同一个单元格，"
                         "运行后再保存")
    target = folder() / f"{slot}.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    (target.parent / "__init__.py").touch()
    header = (f"# 我的工具包：{slot}（接在 {SLOTS[slot]}）\n"
              f"# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。\n\n")
    target.write_text(header + source + f"\n\nPIECE = {name}\n", encoding="utf-8")
    print(f"已保存 {name} → {target.parent.name}/{target.name}（{SLOTS[slot]}）")
    return target


@dataclass(frozen=True)
class Piece:
    """One slot of the student's toolkit: the function, or why there is none."""

    slot: str
    fn: Callable[..., Any] | None
    problem: str | None  # None when fn is usable; "还没有保存" or what went wrong loading it

    @property
    def ok(self) -> bool:
        return self.fn is not None


def _load_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"my_toolkit_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load() -> dict[str, Piece]:
    """Every slot, each loaded on its own: a missing or broken file is a Piece with a problem, never a raise."""
    pieces = {}
    for slot in SLOTS:
        path = folder() / f"{slot}.py"
        if not path.is_file():
            pieces[slot] = Piece(slot, None, "还没有保存")
            continue
        try:
            fn = getattr(_load_file(path), "PIECE", None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the student's-file boundary: it may raise anything at import, sys.exit() too
            where = f"第 {exc.lineno} 行" if isinstance(exc, SyntaxError) and exc.lineno else ""
            why = "调用了 sys.exit()" if isinstance(exc, SystemExit) else type(exc).__name__
            pieces[slot] = Piece(slot, None, f"{path.name} 加载失败{where}：{why}")
            continue
        pieces[slot] = (Piece(slot, fn, None) if callable(fn)
                        else Piece(slot, None, f"{path.name} 里没有 PIECE = 你的函数"))
    return pieces


__all__ = ["SLOTS", "Piece", "folder", "load", "save"]
