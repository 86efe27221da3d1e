"""The student's own toolkit: the pieces written in the chapters and exercises, saved as plain Python files.

A chapter ends its build with one line, ``save("truncate", smart_truncate)``: the chapter's own checks run on
that version first (``toolkit.check``, the chapter's ``chNN`` table), and only a version that passes them is
written, unless the student says ``anyway=True``; either way one Chinese line says what is in the file now.
What is written is the definitions of the cell that defined the function or class (its imports, functions,
classes and constants; not its demo calls), and of the cells of any helper functions passed after it, to
``my_toolkit/truncate.py`` in the project folder: a file the student can open and read. ``load()`` imports
each saved piece on its own, so one broken file is one broken piece, never a crashed kernel.

Chapters 01–07 save, in order: parse, truncate, retry (the executor's plug-in points), format_message,
evaluate (run_agent's), the executor (chapter 06, a class built on the student's parse, truncate and retry)
and the loop (chapter 07, an async function built on the student's executor, format_message and evaluate);
exercise 07 saves check. A later piece takes the earlier ones with ``pieces("parse", "retry", ...)``: the
student's saved functions, or the toolkit's for a slot not saved yet (its repr says which). The capstone
(toolkit.capstone) runs that whole agent beside the toolkit's.

The interfaces, each the toolkit's own:
  parse(raw, max_chars) -> value; truncate(text, max_chars) -> str;
  retry(tool_fn, *args, max_retries=N, **kwargs) -> (result, error)          (ToolExecutor's plug-ins)
  format_message(tool_name, tool_call_id, result) -> message; evaluate(result, question) -> decision
  executor: a class, Executor(registry=, max_retries=, result_max_chars=, parse=, truncate=, retry=), with
    `registry`, `result_max_chars` and `async run_tool_calls(calls, registry=None) -> [ToolResult]` (as ToolExecutor)
  loop: async loop(question, client, model, executor, format_message=, evaluate=) -> (answer or None, messages)
  check(answer, tool_results) -> verdict                                     (run_agent's check)

``TOOLKIT_MY_DIR`` moves the folder (the test suite points it at a temporary folder, so running the chapters
never touches a student's saved work).
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

# slot -> where it plugs in (shown to the student), in the order the course writes them
SLOTS: dict[str, str] = {
    "parse": "ToolExecutor(parse=…)",
    "truncate": "ToolExecutor(truncate=…)",
    "retry": "ToolExecutor(retry=…)",
    "format_message": "run_agent(format_message=…)",
    "evaluate": "run_agent(evaluate=…)",
    "executor": "run_agent(executor=…)",
    "loop": "run_agent(…) 的位置",
    "check": "run_agent(check=…)",
}
# slot -> the checks its version must pass (toolkit.check: a chapter's chNN table, or an exercise's number)
CHECKS: dict[str, str] = {"parse": "ch01", "truncate": "ch02", "retry": "ch03", "format_message": "ch04",
                          "evaluate": "ch05", "executor": "ch06", "loop": "ch07", "check": "07"}
MY_DIR_ENV = "TOOLKIT_MY_DIR"
CHECK_DEFER_ENV = "TOOLKIT_CHECK_DEFER"  # set by `python -m toolkit.check` while it runs a notebook's cells
_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
         ast.AnnAssign)


def where(slot: str, followed_by: str = "") -> str:
    """Where the course writes `slot`, in Chinese (第 03 章, 练习 07), with the word that follows it spaced as
    Chinese is after a number (第 03 章的, 练习 07 的)."""
    checks = CHECKS[slot]
    return f"第 {checks[2:]} 章{followed_by}" if checks.startswith("ch") else f"练习 {checks} {followed_by}".rstrip()


def folder() -> Path:
    """Where the pieces are saved: $TOOLKIT_MY_DIR, else my_toolkit/ in the project folder."""
    if os.environ.get(MY_DIR_ENV):
        return Path(os.environ[MY_DIR_ENV])
    project = Path(__file__).resolve().parent.parent
    base = project if (project / "notebooks").is_dir() else Path.cwd()
    return base / "my_toolkit"


def _code_of(fn: Callable) -> Any:
    """The code object that says where `fn` was written: a function's own, or a class's first method's."""
    code = getattr(fn, "__code__", None)
    if code is None and isinstance(fn, type):
        code = next((v.__code__ for v in vars(fn).values() if hasattr(v, "__code__")), None)
    if code is None:
        raise ValueError(f"{fn!r} 不是用 def 或 class 写的，没法保存它的源代码")
    return code


def _cell_source(fn: Callable) -> str:
    """The whole source the function or class was defined in (a notebook cell, or its module file)."""
    lines = linecache.getlines(_code_of(fn).co_filename)
    if not lines:
        try:
            return inspect.getsource(fn)
        except (OSError, TypeError) as exc:
            raise ValueError(f"找不到 {fn.__name__} 的源代码（{exc}）：请在笔记本的单元格里定义它") from None
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
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)  # a function or class defined inside another one
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


def _source_of(fn: Callable, helpers: tuple[Callable, ...]) -> str:
    """The definitions of the cells `helpers` and `fn` were written in, each cell once, helpers' first; for a
    class, the cells of its base classes written beside it (in the same notebook) come first."""
    bases = [b for b in reversed(fn.__mro__[1:]) if b.__module__ == fn.__module__] if isinstance(fn, type) else []
    cells: list[str] = []
    for obj in (*helpers, *bases, fn):
        if not callable(obj):
            raise ValueError(f"save 的参数应该是函数或类，收到的是 {type(obj).__name__}")
        cell = _definitions(_cell_source(obj))
        if cell not in cells:
            cells.append(cell)
    return "\n\n\n".join(cells)


def _checked(slot: str, fn: Callable) -> Any:
    """The Report of the slot's checks on `fn` (toolkit.check), or a Chinese line saying why none ran."""
    from .check import report

    try:
        return report(fn, CHECKS[slot])
    except ValueError as exc:  # fn cannot be sent to the checker (e.g. it holds an open file)
        return f"检查没法运行（{exc}）"
    except KeyboardInterrupt:  # the student stopped the kernel while the checks ran: nothing is written
        return "检查被中断了，没有做完"


def save(slot: str, fn: Callable, *helpers: Callable, anyway: bool = False) -> Path | None:
    """Check `fn` with the slot's own checks, then save it (and the definitions of the cell it was written in,
    of the cells of `helpers`: functions it uses from other cells, and for a class of the cells of its base
    classes written beside it) as the student's piece for `slot`.

    A version that fails a check is not saved unless `anyway=True`: one Chinese line names the checks it
    failed and says what the file holds now (the last saved version, or nothing yet). An exercise's function
    still `raise NotImplementedError` is not saved either (None), and neither is anything while `python -m
    toolkit.check` runs the notebook (TOOLKIT_CHECK_DEFER=1: checking a notebook, a teacher's class included,
    never writes a toolkit). Raises ValueError (in Chinese: the student called it) for an unknown slot,
    something that is not a function or class written with def / class, or definitions that use a name
    defined in another cell.
    """
    if slot not in SLOTS:
        raise ValueError(f"没有叫 {slot!r} 的位置：请从这些位置里选一个：{', '.join(SLOTS)}")
    if not callable(fn):
        raise ValueError(f"save 的第二个参数应该是函数或类，收到的是 {type(fn).__name__}：请传函数本身（不加括号）")
    if os.environ.get(CHECK_DEFER_ENV) == "1":
        return None
    source, name = _source_of(fn, helpers), fn.__name__
    if f"def {name}(" not in source and f"class {name}" not in source:
        raise ValueError(f"在 {name} 所在的单元格里找不到它的定义：请把 def {name}(...) 放在单元格的最外层再保存")
    if _unwritten(source, name):
        print(f"○ 没有保存：{name} 还是 raise NotImplementedError。写好、检查全部通过后再运行这一格。")
        return None
    missing = _missing_names(source, name)
    if missing:
        raise ValueError(f"{name} 用到了 {', '.join(missing)}，但它们不在同一个单元格里：把它们挪到同一个单元格，"
                         f"或者把定义它们的函数也交给 save，例如 save({slot!r}, {name}, {missing[0]})")
    target = folder() / f"{slot}.py"
    found = _checked(slot, fn)
    failed = [] if isinstance(found, str) else [r.title for r in found.results if not r.passed]
    problem = found if isinstance(found, str) else found.problem
    if problem or failed:
        why = problem or (f"没有通过{where(slot, '的')} {len(failed)} 项检查：" + "；".join(failed[:3])
                          + ("……" if len(failed) > 3 else ""))
        if not anyway:
            now = "仍是上一次保存的版本" if target.is_file() else "还没有保存过任何版本"
            print(f"✘ 没有保存 {name}：{why}\n  my_toolkit/{target.name} {now}。先运行 "
                  f"check({name}, {CHECKS[slot]!r}) 看原因；确实要保存这个版本，就写 "
                  f"save({slot!r}, {name}, anyway=True)")
            return None
        print(f"⚠ 照你的要求保存了，但这个版本{why}")
    else:
        print(f"✔ {where(slot, '的')} {found.total} 项检查全部通过")
    target.parent.mkdir(parents=True, exist_ok=True)
    (target.parent / "__init__.py").touch()
    header = (f"# 我的工具包：{slot}（接在 {SLOTS[slot]}）\n"
              f"# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。\n\n")
    target.write_text(header + source + f"\n\n\nPIECE = {name}\n", encoding="utf-8")
    print(f"已保存 {name} → {target.parent.name}/{target.name}（{SLOTS[slot]}）")
    return target


@dataclass(frozen=True)
class Piece:
    """One slot of the student's toolkit: the function (or class), or why there is none."""

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


class _LoadsItself(Exception):
    """A saved file that, while it is loaded, loads its own slot (a wrapper saved over the piece it wraps)."""


_LOADING: set[str] = set()  # the slots whose files are being loaded right now


def load(*slots: str) -> dict[str, Piece]:
    """The given slots (default: every slot), each loaded on its own: a missing or broken file is a Piece with a
    problem, never a raise. ValueError (in Chinese) for a slot name that does not exist."""
    for slot in slots:
        if slot not in SLOTS:
            raise ValueError(f"没有叫 {slot!r} 的位置：请从这些位置里选：{', '.join(SLOTS)}")
    pieces = {}
    for slot in slots or tuple(SLOTS):
        path = folder() / f"{slot}.py"
        if not path.is_file():
            pieces[slot] = Piece(slot, None, "还没有保存")
            continue
        if slot in _LOADING:  # this file, while it loads, asks for itself (pieces("evaluate") in evaluate.py)
            raise _LoadsItself(slot)
        _LOADING.add(slot)
        try:
            fn = getattr(_load_file(path), "PIECE", None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the student's-file boundary: it may raise anything at import, sys.exit() too
            where_ = f"第 {exc.lineno} 行" if isinstance(exc, SyntaxError) and exc.lineno else ""
            why = ("调用了 sys.exit()" if isinstance(exc, SystemExit) else
                   "它用 pieces() 或 load() 读了它自己" if isinstance(exc, _LoadsItself) else type(exc).__name__)
            pieces[slot] = Piece(slot, None, f"{path.name} 加载失败{where_}：{why}")
            continue
        finally:
            _LOADING.discard(slot)
        pieces[slot] = (Piece(slot, fn, None) if callable(fn)
                        else Piece(slot, None, f"{path.name} 里没有 PIECE = 你的函数"))
    return pieces


# --- the toolkit's own piece for each slot, in the slot's shape ------------------------------------------------

def toolkit_parse(raw: Any, max_chars: int) -> Any:
    """The executor's own budget pass as a parse plug-in (fit_and_redact): what the model reads of `raw`, within
    max_chars, so ToolExecutor(parse=toolkit_parse) hands the model what ToolExecutor() does."""
    from .fitting import fit_and_redact

    return fit_and_redact(raw, max_chars)[0]


def toolkit_piece(slot: str) -> Callable[..., Any]:
    """The toolkit's function (or class) for `slot`, with the slot's interface. ValueError for "loop" and
    "check": the toolkit's loop is run_agent itself, and its check the capstone's answer check."""
    if slot == "parse":
        return toolkit_parse
    if slot == "truncate":
        from .truncate import smart_truncate
        return smart_truncate
    if slot == "retry":
        from .retry import call_tool_with_retry
        return call_tool_with_retry
    if slot == "format_message":
        from .messages import format_tool_message
        return format_tool_message
    if slot == "evaluate":
        from .decisions import evaluate_tool_result
        return evaluate_tool_result
    if slot == "executor":
        from .executor import ToolExecutor
        return ToolExecutor
    stand_ins = ", ".join(s for s in SLOTS if s not in ("loop", "check"))
    raise ValueError(f"{slot!r} 没有 toolkit 的替身：请从有替身的位置里选：{stand_ins}")


class Pieces:
    """What `pieces(...)` hands a chapter: `my.retry` is the student's saved retry, or the toolkit's while there is
    none (the repr says which, and why); `mine` lists the slots that are the student's."""

    def __init__(self, found: dict[str, Piece]) -> None:
        self.found = found
        self.mine = [slot for slot, piece in found.items() if piece.ok]
        for slot, piece in found.items():
            setattr(self, slot, piece.fn if piece.ok else toolkit_piece(slot))

    def __repr__(self) -> str:
        lines = []
        for slot, piece in self.found.items():
            fn = getattr(self, slot)
            if piece.ok:
                lines.append(f"✔ {slot:<15} 你在{where(slot, '保存的')} {fn.__name__}")
            else:
                lines.append(f"○ {slot:<15} {piece.problem}（{where(slot)}）：先用 toolkit 的 {fn.__name__} 代替")
        return "\n".join(lines)


def pieces(*slots: str) -> Pieces:
    """The student's saved pieces for `slots` (my.parse, my.retry, ...), the toolkit's for a slot not saved or not
    loadable. ValueError (in Chinese) for an unknown slot, or one without a toolkit stand-in (loop, check)."""
    if not slots:
        raise ValueError("请写出要哪些部件，例如 pieces(\"parse\", \"truncate\", \"retry\")")
    found = load(*slots)  # ValueError for a name that is not a slot
    for slot in slots:
        toolkit_piece(slot)  # ValueError for a slot without a stand-in
    return Pieces(found)


__all__ = ["SLOTS", "CHECKS", "Piece", "Pieces", "folder", "load", "pieces", "save", "toolkit_piece", "where"]
