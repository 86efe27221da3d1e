"""Row 4: how long `import toolkit` takes next to `import openai`, each in a fresh interpreter.

Each sample is a new subprocess that times its own import (interpreter start-up
excluded; the whole process time is kept too). The two alternate, after one
unrecorded warm-up each (bytecode caches). Also recorded: which non-stdlib
modules `import toolkit` loads, and what the first tool call through a
ToolRegistry costs in a fresh process (it imports jsonschema on first use).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ._stats import line, per_round, row, summarize, target

KEY = "import"
TITLE = "import toolkit 对比 import openai（全新进程）"
EN = "`import toolkit` vs `import openai` (fresh processes)"

ROOT = Path(__file__).resolve().parent.parent

_TIMER = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"

_LOADED = """
import sys
before = set(sys.modules)
import toolkit
new = {m.split('.')[0] for m in set(sys.modules) - before}
print(sorted(n for n in new if n not in sys.stdlib_module_names and not n.startswith('_') and n != 'toolkit'))
"""

_FIRST_CALL = """
import asyncio, json, time
t0 = time.perf_counter()
from toolkit import Tool, ToolExecutor, ToolRegistry
t1 = time.perf_counter()
def add(a: int, b: int) -> int:
    return a + b
reg = ToolRegistry([Tool("add", add, "加法", {"type": "object", "properties": {"a": {"type": "integer"},
      "b": {"type": "integer"}}, "required": ["a", "b"]})])
ex = ToolExecutor(registry=reg)
call = {"id": "c1", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
async def main():
    t = time.perf_counter(); r1 = await ex.run_tool_call(call); first = time.perf_counter() - t
    t = time.perf_counter(); r2 = await ex.run_tool_call(call); second = time.perf_counter() - t
    return first, second, r1.ok and r2.ok
first, second, ok = asyncio.run(main())
print(json.dumps({"import": t1 - t0, "first": first, "second": second, "ok": ok}))
"""


def _run(code: str) -> tuple[str, float]:
    """Run `code` in a fresh interpreter from the repo root: (stdout, wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return proc.stdout.strip(), wall


def import_seconds(module: str) -> tuple[float, float]:
    """(seconds the import took inside a fresh interpreter, whole process seconds)."""
    out, wall = _run(_TIMER.format(mod=module))
    return float(out.splitlines()[-1]), wall


def importtime_top(module: str, top: int = 6) -> list[dict]:
    """The modules with the largest cumulative import time (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    rows = []
    for text in proc.stderr.splitlines():
        parts = [p.strip() for p in text.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[0].isdigit():
            rows.append({"module": parts[2], "self_ms": int(parts[0]) / 1000, "cumulative_ms": int(parts[1]) / 1000})
    rows.sort(key=lambda r: -r["cumulative_ms"])
    return rows[:top]


def run(quick: bool = False) -> dict:
    """Measure row 4; returns the row dict (see _stats.row)."""
    rounds = 3 if quick else 7
    for mod in ("toolkit", "openai"):
        import_seconds(mod)  # warm-up: bytecode caches
    samples: dict[str, list[tuple[float, float]]] = {"toolkit": [], "openai": []}
    for r in range(rounds):
        for mod in (("toolkit", "openai") if r % 2 == 0 else ("openai", "toolkit")):
            samples[mod].append(import_seconds(mod))
    tk = summarize([s[0] for s in samples["toolkit"]])
    oa = summarize([s[0] for s in samples["openai"]])
    ratio = summarize(per_round([s[0] for s in samples["toolkit"]], [s[0] for s in samples["openai"]],
                                lambda a, b: a / b))
    tk_proc = summarize([s[1] for s in samples["toolkit"]])
    loaded = json.loads(_run(_LOADED)[0].replace("'", '"'))
    first = [json.loads(_run(_FIRST_CALL)[0]) for _ in range(1 if quick else 3)]
    first_s = summarize([f["first"] for f in first])
    second_s = summarize([f["second"] for f in first])
    lines = [
        line("import toolkit", "import toolkit", tk["median"], "s", tk["spread"]),
        line("import openai", "import openai", oa["median"], "s", oa["spread"]),
        line("比值 toolkit / openai", "ratio toolkit / openai", ratio["median"], "×", ratio["spread"]),
        line("python -c 'import toolkit' 整个进程", "whole `python -c 'import toolkit'` process", tk_proc["median"],
             "s", tk_proc["spread"]),
        line("import toolkit 载入的非标准库模块", "non-stdlib modules loaded by import toolkit",
             ", ".join(loaded) or "（无）", ""),
        line("全新进程中第一次 run_tool_call（首次导入 jsonschema）", "first run_tool_call in a fresh process "
             "(imports jsonschema)", first_s["median"], "s", first_s["spread"]),
        line("第二次 run_tool_call", "second run_tool_call", second_s["median"] * 1e3, "ms"),
    ]
    targets = [
        target("import toolkit < 0.3 s", "import toolkit < 0.3 s", tk["median"], "<", 0.3, "s"),
        target("toolkit / openai ≤ 0.5（远小于 1）", "toolkit / openai ≤ 0.5 (well under 1)", ratio["median"], "<=",
               0.5, "×"),
    ]
    note = f"{rounds} 轮，toolkit 与 openai 交替，各在全新子进程中计时（不含解释器启动）"
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"toolkit_s": tk, "openai_s": oa, "ratio": ratio, "toolkit_process_s": tk_proc,
                     "non_stdlib_loaded": loaded, "first_tool_call": first,
                     "importtime_toolkit_top": importtime_top("toolkit"),
                     "importtime_jsonschema_top": importtime_top("jsonschema", 4)})
