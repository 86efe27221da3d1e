"""Row 1's `execute` overhead across commits: other trees' toolkits measured side by side with this one.

    python -m bench.across 4038d06 49fedf6 HEAD .       # "." is the working tree
    python -m bench.across --processes 5 --out bench/results/across.json REV ...

Each REV is extracted with `git archive` into a temporary folder. Then, in
`--processes` passes that rotate the order, every tree runs the same measurement
in a fresh interpreter: this file's code, the toolkit imported from that tree
(sys.path[0]; the process says which file it imported). In that process a bare
`await noop()` and `ToolExecutor(max_retries=2).execute(noop, "noop")` run in
interleaved rounds (bench._stats.ainterleaved), once with a tool returning None
(row 1's tool) and once with one returning {"ok": 1} (a value to budget,
redact and keep). A process's figure is the median over its rounds of
(execute - bare); a tree's is the median over its processes, also given as a
ratio to the first REV's. Only `ToolExecutor(max_retries=...)` and
`execute(fn, name)` are used, which every commit of the toolkit has.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONTENDERS = ("none", "dict")  # what the tool returns: None (row 1's tool), {"ok": 1}


def extract(rev: str, dest: Path, repo: Path = ROOT) -> Path:
    """The toolkit of `rev` in a folder under `dest` ("." = the working tree, used in place); ValueError for
    a rev git does not know."""
    if rev == ".":
        return repo
    done = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev, "toolkit"], capture_output=True)
    if done.returncode != 0:
        raise ValueError(f"git archive {rev}: {done.stderr.decode(errors='replace').strip()}")
    tree = dest / rev.replace("/", "_")
    tree.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(tree, filter="data")
        else:
            tar.extractall(tree)
    return tree


def _measure(rounds: int, calls: int) -> dict[str, Any]:
    """In the measuring process: the medians over rounds of execute - bare, in µs per call, per contender."""
    import statistics

    import toolkit
    from toolkit import ToolExecutor

    from bench._stats import ainterleaved, per_call  # this checkout's (sys.path[1]); the toolkit is the tree's

    async def none() -> None:
        return None

    async def small() -> dict:
        return {"ok": 1}

    async def main() -> dict[str, list[float]]:
        executor = ToolExecutor(max_retries=2)
        return await ainterleaved({
            "bare": per_call(none, calls),
            "none": per_call(lambda: executor.execute(none, "noop"), calls),
            "dict": per_call(lambda: executor.execute(small, "noop"), calls),
        }, rounds)

    times = asyncio.run(main())
    over = {name: statistics.median((t - b) * 1e6 for t, b in zip(times[name], times["bare"]))
            for name in CONTENDERS}
    return {"toolkit": toolkit.__file__, **over}


def measure_in(tree: Path, rounds: int = 15, calls: int = 4000) -> dict[str, Any]:
    """One fresh interpreter measuring the toolkit of `tree`; RuntimeError if it imported another one."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2]); "
            "from bench.across import _measure; print(json.dumps(_measure(int(sys.argv[3]), int(sys.argv[4]))))")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(tree), str(ROOT), str(rounds), str(calls)],
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"measuring {tree} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(result["toolkit"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"{tree}: the process imported {result['toolkit']}, not that tree's toolkit")
    return result


def compare(revs: list[str], processes: int = 3, rounds: int = 15, calls: int = 4000) -> dict[str, Any]:
    """{rev: {contender: [µs per process]}} and the medians and ratios to the first rev."""
    from bench._stats import rotation, summarize

    revs = list(dict.fromkeys(revs))  # a rev named twice is measured once
    with tempfile.TemporaryDirectory(prefix="bench-across-") as tmp:
        trees = {rev: extract(rev, Path(tmp)) for rev in revs}
        per: dict[str, dict[str, list[float]]] = {rev: {c: [] for c in CONTENDERS} for rev in revs}
        for p in range(processes):
            for rev in rotation(revs, p):
                figures = measure_in(trees[rev], rounds, calls)
                for c in CONTENDERS:
                    per[rev][c].append(figures[c])
    medians = {rev: {c: summarize(v)["median"] for c, v in per[rev].items()} for rev in revs}
    first = medians[revs[0]]
    ratios = {rev: {c: m[c] / first[c] if first[c] > 0 else float("nan") for c in CONTENDERS}
              for rev, m in medians.items()}
    return {"revs": revs, "processes": processes, "rounds": rounds, "calls": calls,
            "per_process_us": per, "median_us": medians, "ratio_to_first": ratios}


def _commit(rev: str) -> str:
    if rev == ".":
        return "working tree"
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True)
    return done.stdout.strip() or rev


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.across",
                                     description="不同提交的 ToolExecutor.execute 额外开销，并排测量")
    parser.add_argument("revs", nargs="+", help="提交（git 能认的写法），. 表示工作区；比值以第一个为准")
    parser.add_argument("--processes", type=int, default=3, help="每个提交测几个新进程（轮流）")
    parser.add_argument("--rounds", type=int, default=15, help="每个进程内交替几轮")
    parser.add_argument("--calls", type=int, default=4000, help="每轮调用次数")
    parser.add_argument("--out", type=Path, help="把结果写成 JSON")
    args = parser.parse_args(argv)
    try:
        result = compare(args.revs, args.processes, args.rounds, args.calls)
    except (ValueError, RuntimeError) as exc:
        print(f"无法测量：{exc}", file=sys.stderr)
        return 2
    dict_head = '返回 {"ok": 1}'
    print(f"{'提交':<16}{'返回 None':>14}{dict_head:>18}   （µs/次，{args.processes} 个进程的中位数；括号里是与第一个的比值）")
    for rev in result["revs"]:
        m, r = result["median_us"][rev], result["ratio_to_first"][rev]
        print(f"{rev + ' (' + _commit(rev) + ')':<16}{m['none']:>9.2f} ({r['none']:.2f}){m['dict']:>11.2f} ({r['dict']:.2f})")
    if args.out:
        result["commits"] = {rev: _commit(rev) for rev in result["revs"]}
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"结果已写入 {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
