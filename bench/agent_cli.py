"""Row 6: the offline agent answering the sales question of chapter 07 end to end, as a CLI process.

`python -m toolkit.agent "哪个类别销售额最高？总销售额是多少？"` in a fresh process,
alternating with two floors: `python -c pass` (the interpreter) and
`python -c "import openai, toolkit.agent"` (loading the code). The answer must come
from the offline model and contain the sales numbers (显示器 4495, total 9692);
when toolkit.agent is missing or the run fails, the row says so and is skipped.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ._stats import line, row, summarize
from .imports import importtime_top

KEY = "agent"
TITLE = "离线 Agent 命令行端到端回答销售问题"
EN = "Offline agent CLI answering the sales question end to end"

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "哪个类别销售额最高？总销售额是多少？"
EXPECTED = ("显示器", "4495", "9692")
OFFLINE_MARK = "【离线模型】"
_MODEL_VARS = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME")


def _env() -> dict[str, str]:
    """This process's environment without any model settings: the offline model answers."""
    return {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}


def _timed(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=_env())
    return time.perf_counter() - t0, proc


def _skip(note: str, data: dict | None = None) -> dict:
    return row(KEY, TITLE, EN, status="skipped", note=note, data=data or {})


def run(quick: bool = False) -> dict:
    """Measure row 6; returns the row dict (see _stats.row), status "skipped" when the agent cannot run."""
    if not ((ROOT / "toolkit" / "agent.py").exists() or (ROOT / "toolkit" / "agent" / "__init__.py").exists()):
        return _skip("toolkit/agent 还不存在：跳过")
    agent_args = ["-m", "toolkit.agent", QUESTION]
    _, first = _timed(agent_args)  # warm-up (bytecode caches) and the check of the answer
    answer = first.stdout.strip()
    if first.returncode != 0:
        tail = (first.stderr.strip() or first.stdout.strip())[-300:]
        return _skip(f"Agent 运行失败（退出码 {first.returncode}）：跳过", {"stderr_tail": tail})
    if not answer.startswith(OFFLINE_MARK):
        return _skip("回答不是离线模型给出的（配置了真实模型？）：跳过，离线行只在没有密钥时测量")
    missing = [x for x in EXPECTED if x not in answer]
    rounds = 2 if quick else 5
    contenders = {"agent": agent_args, "import": ["-c", "import openai, toolkit.agent"], "python": ["-c", "pass"]}
    times: dict[str, list[float]] = {k: [] for k in contenders}
    codes = []
    for r in range(rounds):
        names = list(contenders)
        for name in names[r % 3:] + names[: r % 3]:
            wall, proc = _timed(contenders[name])
            times[name].append(wall)
            if name == "agent":
                codes.append(proc.returncode)
    s = {k: summarize(v) for k, v in times.items()}
    lines = [
        line("Agent 命令行（提问到回答）", "agent CLI (question to answer)", s["agent"]["median"], "s",
             s["agent"]["spread"], min=s["agent"]["min"], max=s["agent"]["max"]),
        line("其中 import openai, toolkit.agent（整个进程）", "of which `import openai, toolkit.agent` (process)",
             s["import"]["median"], "s",
             s["import"]["spread"]),
        line("其中 python -c pass", "of which `python -c pass`", s["python"]["median"], "s", s["python"]["spread"]),
        line("回答含 显示器 / 4495 / 9692", "answer contains 显示器 / 4495 / 9692",
             "是" if not missing else f"缺少 {'、'.join(missing)}", ""),
    ]
    note = f"{rounds} 轮，与两个下限交替；每轮退出码 {sorted(set(codes))}"
    status = "ok" if not missing and set(codes) == {0} else "error"
    return row(KEY, TITLE, EN, lines=lines, status=status, note=note,
               data={"seconds": s, "answer": answer[:400], "missing": missing, "exit_codes": codes,
                     "importtime_agent_top": importtime_top("toolkit.agent", 8)})
