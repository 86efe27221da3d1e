"""The entry point of `python -m bench`: run the rows, print the table, write the JSON.

Rows (by number or key): 1 overhead, 2 parse, 3 parallel, 4 import,
5 notebooks, 6 agent, 7 charts, 8 panel, 9 grading, 10 longrun, 11 class. `--quick` is a fast smoke run with fewer rounds and
smaller inputs; `--only 1,3` (or `--only overhead,parallel`) picks rows;
`--out PATH` says where the JSON goes (default bench/results/latest.json,
or bench/results/quick.json with --quick); `--markdown` prints the English
Markdown table of an existing results file instead of running anything.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

from . import agent_cli, charts, classroom, grading, imports, longrun, notebooks, overhead, panel, parallel, sizes

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
ROWS: list[tuple[str, ModuleType]] = [("1", overhead), ("2", sizes), ("3", parallel), ("4", imports),
                                      ("5", notebooks), ("6", agent_cli), ("7", charts),
                                      ("8", panel), ("9", grading), ("10", longrun),
                                      ("11", classroom)]
PACKAGES = ("tool-result-lab", "tenacity", "stamina", "openai", "jsonschema", "nbval", "pytest", "ipykernel")


def select_rows(only: str | None) -> list[tuple[str, ModuleType]]:
    """The rows named in `only` ("1,3" or "overhead,parallel"; None: all), in table order.

    Raises ValueError naming the valid choices for anything unknown.
    """
    if not only:
        return list(ROWS)
    wanted = {part.strip().lower() for part in only.split(",") if part.strip()}
    known = {num for num, _ in ROWS} | {mod.KEY for _, mod in ROWS}
    unknown = sorted(wanted - known)
    if unknown or not wanted:
        choices = "、".join(f"{num}={mod.KEY}" for num, mod in ROWS)
        raise ValueError(f"--only 中有未知的行：{', '.join(unknown) or '（空）'}；可选：{choices}")
    return [(num, mod) for num, mod in ROWS if num in wanted or mod.KEY in wanted]


def machine_facts() -> dict:
    """CPU count, Python, platform, package versions, git commit, load average."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": sys.version.split()[0], "implementation": platform.python_implementation(),
        "platform": platform.platform(), "machine": platform.machine(),
        "packages": versions, "git_commit": commit,
        "loadavg_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def _clean_json(value: Any) -> Any:
    """NaN and infinities become null, so the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_json(v) for v in value]
    return value


def write_json(report: dict, out: Path) -> None:
    """Write atomically (a .tmp file, then rename)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(_clean_json(report), ensure_ascii=False, indent=1, allow_nan=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, out)


# --- the table -----------------------------------------------------------------------

def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value == 0 or 0.01 <= abs(value) < 10_000:
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return f"{value:.3g}"
    return "—" if value is None else str(value)


def _mark(met: bool | None) -> str:
    return {True: "✔ 达成", False: "✘ 未达成", None: "？ 未测"}[met]


def format_table(report: dict) -> str:
    """The terminal table: one block per row, its figures, then its targets."""
    out = []
    for r in report["rows"]:
        out.append(f"\n== {r['number']}. {r['title']} [{r['status']}] ({r['seconds']:.1f} s)")
        width = max([_width(x["label"]) for x in r["lines"]] + [10]) + 2
        for x in r["lines"]:
            spread = f"  ±{x['spread'] * 50:.0f}%" if isinstance(x.get("spread"), float) and \
                math.isfinite(x["spread"]) and x["spread"] > 0 else ""
            peak = f"  内存 {x['peak']}" if x.get("peak") else ""
            best = f"  最好一轮 {_fmt(x['best'])}" if x.get("best") is not None else ""
            out.append(f"   {_pad(x['label'], width)}{_fmt(x['value'])} {x['unit']}{spread}{best}{peak}")
        for t in r["targets"]:
            out.append(f"   目标 {t['what']}：{_fmt(t['value'])} {t['unit']}  {_mark(t['met'])}")
        if r["note"]:
            out.append(f"   注：{r['note']}")
    return "\n".join(out)


_EN_WORDS = (("µs/次", "µs/call"), ("KB/次", "KB/call"), ("（无）", "none"), ("，", ", "), ("次", ""), ("是", "yes"),
             ("缺少", "missing"), ("否", "no"), ("字符", "chars"), ("轮", "turns"), ("人", "students"))


def _en(text: str) -> str:
    for zh, en in _EN_WORDS:
        text = text.replace(zh, en)
    return text


def format_markdown(report: dict) -> str:
    """The English Markdown table for bench/README.md."""
    lines = ["| # | figure | value | target | met |", "|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| **{r['number']}** | **{r['en']}** ({r['status']}) | | | |")
        for x in r["lines"]:
            spread = f" (±{x['spread'] * 50:.0f}%)" if isinstance(x.get("spread"), (int, float)) and x["spread"] and \
                math.isfinite(x["spread"]) else ""
            peak = f"; peak {x['peak']}" if x.get("peak") else ""
            best = f"; best round {_fmt(x['best'])}" if x.get("best") is not None else ""
            value = _en(f"{_fmt(x['value'])} {x['unit']}".strip())
            lines.append(f"| | {x['en']} | {value}{spread}{best}{peak} | | |")
        for t in r["targets"]:
            met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
            value = _en(f"{_fmt(t['value'])} {t['unit']}".strip())
            lines.append(f"| | target: {t['en']} | {value} | {t['op']} {_fmt(t['limit'])} | {met} |")
    return "\n".join(lines)


# --- running ---------------------------------------------------------------------------

def run_rows(selected: list[tuple[str, ModuleType]], quick: bool, echo: bool = True) -> list[dict]:
    """Run each row; a row that raises becomes status "error" and the others still run."""
    results = []
    for number, module in selected:
        if echo:
            print(f"… {number}. {module.TITLE}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            result = module.run(quick=quick)
        except Exception as exc:  # one broken row must not lose the others' figures
            result = {"key": module.KEY, "title": module.TITLE, "en": module.EN, "status": "error",
                      "note": f"{type(exc).__name__}: {str(exc)[:300]}", "lines": [], "targets": [], "data": {}}
        result["number"] = number
        result["seconds"] = time.perf_counter() - t0
        results.append(result)
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Tool Result Lab 的基准测试（并排比值）")
    parser.add_argument("--quick", action="store_true", help="快速冒烟：更少轮次、更小的输入")
    parser.add_argument("--only", metavar="ROWS", help="只跑这些行，如 1,3 或 overhead,parallel")
    parser.add_argument("--out", metavar="PATH", type=Path, help="JSON 输出路径（默认 bench/results/latest.json）")
    parser.add_argument("--markdown", action="store_true", help="不运行，只把已有结果打印成英文 Markdown 表")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench; 0 when every selected row ran (targets met or not), 1 when a row errored."""
    parser = _parser()
    args = parser.parse_args(argv)
    out = args.out or RESULTS / ("quick.json" if args.quick else "latest.json")
    if args.markdown:
        if not out.exists():
            parser.error(f"找不到结果文件 {out}：先运行 python -m bench")
        print(format_markdown(json.loads(out.read_text(encoding="utf-8"))))
        return 0
    try:
        selected = select_rows(args.only)
    except ValueError as exc:
        parser.error(str(exc))
    facts = machine_facts()
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    rows = run_rows(selected, args.quick)
    facts["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    report = {"started_utc": started, "quick": args.quick, "seconds": time.perf_counter() - t0,
              "machine": facts, "rows": rows}
    print(format_table(report))
    write_json(report, out)
    print(f"\n结果已写入 {out}（共 {report['seconds']:.0f} 秒；CPU {facts['cpus_usable']} 核，"
          f"Python {facts['python']}）")
    return 1 if any(r["status"] == "error" for r in rows) else 0
