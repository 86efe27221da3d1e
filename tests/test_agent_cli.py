"""`python -m toolkit.agent` as a student runs it: a real subprocess, a real endpoint on 127.0.0.1.

Each test starts a scripted model server in this process and points the
subprocess at it with MODEL_BASE_URL / MODEL_NAME / OPENAI_API_KEY, exactly as
a .env would. Failures must be one Chinese line on stderr, exit code 1, no
traceback, and never the key.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolkit.llm import OfflineAPIError, OfflineServer, chat_completion, tool_call

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-SECRET123456789abcdef"
SALES_QUESTION = "哪个类别销售额最高？总销售额是多少？"

def hermetic_env(**extra: str) -> dict[str, str]:
    """os.environ without any model settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "DASHSCOPE_", "MODEL_", "TOOLKIT_"))}
    # TOOLKIT_DOTENV=none: a developer's real .env in the project root is never read by these tests
    env.update(PYTHONUTF8="1", PYTHONDONTWRITEBYTECODE="1", TOOLKIT_DOTENV="none", **extra)
    return env


def cli(*args: str, env: dict[str, str], stdin: str | None = None,
        module: str = "toolkit.agent") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, input=stdin if stdin is not None else "", capture_output=True, text=True,
                          encoding="utf-8", env=env, cwd=ROOT, timeout=60)


def endpoint_env(server: OfflineServer) -> dict[str, str]:
    return hermetic_env(MODEL_BASE_URL=server.base_url, MODEL_NAME="x", OPENAI_API_KEY=SECRET)


def assert_one_line_failure(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and SECRET not in proc.stderr
    for word in words:
        assert word in lines[0]


def sales_model(request: dict) -> dict:
    """A model that calls analyze_sales_csv, then answers with the numbers of its result."""
    tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
    if not tool_messages:
        return chat_completion(None, [tool_call("analyze_sales_csv", {}, id="call_sales")])
    data = json.loads(tool_messages[-1]["content"])["result"]  # the data itself: one status
    return chat_completion(f"销售额最高的是{data['highest_category']}（{data['highest_sales']}），"
                           f"总销售额 {data['total_sales']}。")


# --- a configured endpoint ---------------------------------------------------------------------

def test_cli_answers_through_the_configured_endpoint(serve):
    server = serve(sales_model)
    proc = cli(SALES_QUESTION, env=endpoint_env(server))

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "销售额最高的是显示器（4495），总销售额 9692。"
    assert proc.stderr == "" and SECRET not in proc.stdout
    assert [r["model"] for r in server.requests] == ["x", "x"]
    assert server.requests[1]["messages"][-1]["tool_call_id"] == "call_sales"


def test_cli_verbose_prints_the_transcript_on_stderr_and_only_the_answer_on_stdout(serve):
    server = serve(sales_model)
    proc = cli("--verbose", SALES_QUESTION, env=endpoint_env(server))

    assert proc.returncode == 0 and proc.stdout.count("\n") == 1
    assert "请求工具 analyze_sales_csv" in proc.stderr and "工具 analyze_sales_csv → success" in proc.stderr
    assert "[第 2 轮] 模型" in proc.stderr and SECRET not in proc.stderr + proc.stdout


@pytest.mark.parametrize("status, words, requests", [
    (401, ("401", "API Key"), 1),   # not retried: the key is wrong
    (429, ("429", "限流"), 3),       # the SDK retries twice (retry-after-ms: 1 keeps it instant; 0 is ignored)
    (500, ("500",), 3),
])
def test_cli_http_error_is_one_chinese_line_without_traceback_or_key(serve, status, words, requests):
    def failing(_: dict) -> Any:
        raise OfflineAPIError(status, f"rejected key {SECRET}", headers={"retry-after-ms": "1"})
    server = serve(failing)
    proc = cli(SALES_QUESTION, env=endpoint_env(server))

    assert_one_line_failure(proc, *words)
    assert len(server.requests) == requests


def test_cli_unreachable_endpoint_is_one_line(serve):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = hermetic_env(MODEL_BASE_URL=f"http://127.0.0.1:{port}/v1", MODEL_NAME="x", OPENAI_API_KEY=SECRET)
    proc = cli(SALES_QUESTION, env=env)
    assert_one_line_failure(proc, "连不上模型接口", f"127.0.0.1:{port}")


def test_cli_loop_limit_is_one_line_and_exit_1(serve):
    counter = {"n": 0}

    def always_another_tool(_: dict) -> dict:
        counter["n"] += 1
        return chat_completion(None, [tool_call("get_weather", {"city": ["上海", "北京", "广州"][counter["n"] % 3]},
                                                id=f"call_{counter['n']}")])
    server = serve(always_another_tool)
    proc = cli("--max-turns", "2", "上海天气？", env=endpoint_env(server))

    assert_one_line_failure(proc, "2 轮", "max_turns")
    assert len(server.requests) == 2


def test_cli_config_error_is_one_line_and_names_the_variable():
    env = hermetic_env(MODEL_BASE_URL="ftp://example.com/v1", MODEL_NAME="x", OPENAI_API_KEY=SECRET)
    proc = cli(SALES_QUESTION, env=env)
    assert_one_line_failure(proc, "配置有误", "MODEL_BASE_URL")


# --- bad usage ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, stdin", [(("   ",), None), ((), ""), ((), "  \n")])
def test_cli_refuses_an_empty_question_with_exit_2(args, stdin):
    proc = cli(*args, env=hermetic_env(), stdin=stdin)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "问题不能为空" in proc.stderr and "Traceback" not in proc.stderr


# --- offline: no key, no network ---------------------------------------------------------------------

def test_cli_without_any_key_answers_offline():
    # how fast is measured by bench (row 6), not here: this machine is shared and noisy
    proc = cli(SALES_QUESTION, env=hermetic_env())

    assert proc.returncode == 0, proc.stderr
    for fact in ("显示器", "4495", "9692"):
        assert fact in proc.stdout


def test_cli_answers_through_the_course_tools_served_over_mcp():
    proc = cli("--mcp", "-v", SALES_QUESTION, env=hermetic_env())
    assert proc.returncode == 0, proc.stderr
    assert "销售额最高的类别是显示器" in proc.stdout and "9692" in proc.stdout  # the sales tool's own wording
    assert "[MCP] 工具来自 MCP 服务器（stdio 子进程）：analyze_sales_csv, get_weather, search_flights" in proc.stderr


def test_cli_reads_the_question_from_stdin_also_as_python_m_toolkit():
    proc = cli(env=hermetic_env(), stdin=SALES_QUESTION + "\n", module="toolkit")
    assert proc.returncode == 0, proc.stderr
    assert "9692" in proc.stdout and "显示器" in proc.stdout
