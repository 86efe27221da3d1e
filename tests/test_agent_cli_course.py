"""The command line as a student meets it: encodings, the misbehaviour modes' notes, the answer check, dates.

Each test runs `python -m toolkit.agent` in a real subprocess with the offline
model (no key), as the README's quick start does.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


from toolkit.tools import search_flights
from toolkit.tools.travel import TEACHING_DATE, TODAY_ENV, teaching_today

ROOT = Path(__file__).resolve().parent.parent
SALES = "哪个类别销售额最高？"


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "MODEL_", "TOOLKIT_"))}
    out.update(PYTHONUTF8="1", PYTHONDONTWRITEBYTECODE="1", TOOLKIT_DOTENV="none", **extra)
    return out


def cli(*args: str | bytes, stdin: bytes = b"", **extra: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "toolkit.agent", *args], input=stdin, capture_output=True,
                          env=env(**extra), cwd=ROOT, timeout=90)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


# --- encodings (9.14) -----------------------------------------------------------------------------

def test_a_gbk_question_on_stdin_is_understood():
    code, out, err = cli(stdin=SALES.encode("gbk"))
    assert code == 0 and "显示器" in out and "4495" in out and "Traceback" not in err


def test_a_gbk_encoded_argument_is_understood():
    code, out, err = cli(SALES.encode("gbk"))
    assert code == 0 and "9692" in out and "Traceback" not in err


def test_an_undecodable_question_is_one_line_and_exit_2():
    code, out, err = cli(stdin=b"\xff\xfe\xff\x80\x80")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "编码" in err


# --- the misbehaviour modes show their mistake (issue 14) -------------------------------------------

def test_the_honest_model_prints_the_answer_and_nothing_on_stderr():
    code, out, err = cli(SALES)
    assert code == 0 and err == ""
    assert "显示器" in out and "4495" in out and "9692" in out


def test_ignore_results_is_caught_by_the_answer_check_and_strict_fails():
    code, out, err = cli(SALES, MODEL_NAME="offline-stand-in:ignore-results")
    assert code == 0 and out.startswith("【离线模型】")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "没有通过验收" in lines[0] and "不在工具结果中" in lines[0]
    strict, _, _ = cli("--strict", SALES, MODEL_NAME="offline-stand-in:ignore-results")
    assert strict == 1


def test_unknown_tool_mode_says_what_the_model_asked_for_and_what_the_toolkit_did():
    code, out, err = cli(SALES, MODEL_NAME="offline-stand-in:unknown-tool")
    assert code == 0 and "4495" in out
    assert "不存在的工具 query_database" in err and "没有执行" in err


def test_bad_arguments_mode_says_the_arguments_were_refused():
    code, out, err = cli(SALES, MODEL_NAME="offline-stand-in:bad-arguments")
    assert code == 0 and "4495" in out
    assert "不是合法 JSON" in err and "不符合参数定义" in err and "没有执行工具" in err


def test_loop_mode_says_the_repeats_were_refused_and_the_run_stopped():
    code, out, err = cli(SALES, MODEL_NAME="offline-stand-in:loop")
    assert code == 1 and out == ""
    assert "重复调用" in err and "拦下" in err and "最多 6 轮" in err


def test_verbose_with_an_unreachable_endpoint_prints_no_blank_line():
    code, out, err = cli("-v", SALES, MODEL_BASE_URL="http://127.0.0.1:9/v1", MODEL_NAME="x",
                         OPENAI_API_KEY="sk-" + "u" * 30)
    assert code == 1 and out == "" and not err.startswith("\n")
    assert len(err.strip("\n").splitlines()) == 1 and "" not in err.rstrip("\n").split("\n")


def test_verbose_shows_task_progress_as_the_readme_says():
    code, _, err = cli("-v", "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班")
    assert code == 0 and "[任务进度 1/2]" in err and "[任务进度 2/2]" in err
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "[任务进度 1/2]" in readme


# --- the flights tool honours dates (issue 14) -----------------------------------------------------

def test_relative_days_count_from_the_fixed_teaching_date(monkeypatch):
    monkeypatch.delenv(TODAY_ENV, raising=False)
    assert teaching_today() == TEACHING_DATE and TEACHING_DATE.isoweekday() == 6
    today = search_flights("北京", "上海", "今天")["data"]
    monday = search_flights("北京", "上海", "后天")["data"]
    assert (today["date"], today["weekday"]) == ("2026-05-16", "周六")
    assert "LAB105" in [f["flight_no"] for f in today["flights"]]  # flies Friday to Sunday
    assert (monday["date"], monday["weekday"]) == ("2026-05-18", "周一")
    assert "LAB105" not in [f["flight_no"] for f in monday["flights"]] and monday["count"] == 2


def test_the_teaching_date_can_be_moved_and_today_then_follows(monkeypatch):
    monkeypatch.setenv(TODAY_ENV, "2026-05-18")
    data = search_flights("北京", "上海", "今天")["data"]
    assert data["weekday"] == "周一" and all(f["flight_no"] != "LAB105" for f in data["flights"])


def test_today_beijing_to_shanghai_never_lists_a_flight_not_running_that_day_nor_date_none():
    code, out, err = cli("今天北京飞上海的航班", **{TODAY_ENV: "2026-05-18"})
    assert code == 0 and err == ""
    assert "LAB105" not in out and "日期：无" not in out
    assert "2026-05-18（周一）北京飞上海有 2 个航班" in out
