"""The answers chapter 10 gives to its 想一想 questions are true of the chapter's code and of the toolkit."""
from __future__ import annotations

import json
import re
from pathlib import Path

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.agent import run_agent
from toolkit.clearing import ClearPolicy
from toolkit.tools.orders import Outbox, orders_registry
from toolkit.viz import context_sizes

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "10_long_runs.ipynb"
QUESTION = "把 4 月所有已支付的订单找出来，给每位客户发一条付款确认通知，最后告诉我一共通知了几位客户、订单总金额是多少。"


def versions() -> list:
    """Each clear_old_results the chapter writes, in order, run as its cell runs it (checks left out)."""
    found = []
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and re.search(r"^def clear_old_results\(", source, re.M):
            namespace: dict = {"copy": __import__("copy"), "json": json}  # the chapter imports them at the top
            exec(compile(re.sub(r"^check\(.*$", "", source, flags=re.M), "10_long_runs.ipynb", "exec"), namespace)
            found.append(namespace["clear_old_results"])
    return found


def long_run(**settings):
    executor = ToolExecutor(result_max_chars=1200)
    outbox = Outbox()
    settings.setdefault("approve", True)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, registry=orders_registry(executor, outbox), executor=executor, max_turns=60, **settings)
    return run, outbox


def test_the_chapter_writes_three_versions():
    assert len(versions()) == 3


def test_q1_deleting_old_tool_messages_gets_the_request_refused_and_the_run_ends_in_an_error():
    first = versions()[0]
    run, _ = long_run(clear=lambda messages: first(messages, 3000))
    assert run.stopped == "error" and "400" in run.answer and "tool_call" in run.answer


def test_q2_the_third_version_sends_the_same_notices_with_less_context_but_cannot_confirm_cleared_receipts():
    full, outbox = long_run()
    final = versions()[2]
    mine, mine_outbox = long_run(clear=lambda messages: final(messages, 3000, keep_last=3))
    assert mine_outbox.sent == outbox.sent
    assert context_sizes(mine)[-1] < 0.7 * context_sizes(full)[-1]  # "少了四成左右"
    assert mine.answer != full.answer and "无法确认是否发出" in mine.answer
    assert mine.answer.splitlines()[0] == full.answer.splitlines()[0]  # orders, customers, total kept
    exempt, _ = long_run(clear=ClearPolicy(budget_chars=3000, keep_last=3, exempt=("send_notice",)))
    assert exempt.answer == full.answer  # the receipts kept: the answer is whole again


def test_q3_clearing_everything_but_the_last_result_loses_nothing_the_model_noted():
    full, outbox = long_run()
    bare, bare_outbox = long_run(clear=ClearPolicy(budget_chars=0, keep_last=1))
    assert bare.answer == full.answer and bare_outbox.sent == outbox.sent
    assert any("【笔记】" in (m["content"] or "") for m in bare.messages if m["role"] == "assistant")


def test_q4_with_no_setting_the_run_returns_before_the_first_write_instead_of_waiting():
    run, outbox = long_run(approve=None)
    assert run.stopped == "needs_approval" and outbox.sent == [] and run.pending.tool == "send_notice"


# --- 7. tools over MCP (a real stdio server, python -m toolkit.mcp.server --demo) -----------------------

def mcp_call(executor, name, **arguments):
    import asyncio

    from toolkit.wire import ToolCall
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(executor.run_tool_call(ToolCall("call_demo", name, arguments)))


def test_q5_a_server_that_dies_or_hangs_is_a_retryable_error_result_and_the_next_call_restarts_it():
    import time

    from toolkit.mcp import MCPServer
    with MCPServer(extra_args=["--demo"], call_timeout=2) as demo:
        executor = ToolExecutor(registry=demo.registry(), max_retries=0)
        crashed = mcp_call(executor, "exit_now")
        began = time.monotonic()
        hung = mcp_call(executor, "wait_seconds", seconds=60)
        waited = time.monotonic() - began
        after = mcp_call(executor, "get_weather", city="上海")
        starts = demo.starts
    assert (crashed.status, crashed.error_type, crashed.error_code) == ("error", "retryable", "CONNECTION")
    assert (hung.status, hung.error_type, hung.error_code) == ("error", "retryable", "TIMEOUT")
    assert 2 <= waited < 10  # the limit is real seconds: not 60, and not instant under the simulated clock
    assert after.status == "success" and starts == 3


def test_q6_structured_content_against_its_output_schema_is_a_fatal_error_not_retried_where_the_sdk_raises():
    import asyncio
    import sys

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from toolkit.mcp import INVALID_STRUCTURED_CONTENT, MCPServer
    with MCPServer(extra_args=["--demo"]) as demo:
        executor = ToolExecutor(registry=demo.registry(), max_retries=3)
        good, broken = mcp_call(executor, "sales_total"), mcp_call(executor, "sales_total", broken=True)
    assert good.status == "success" and good.data == {"total_sales": 9692}
    assert (broken.status, broken.error_type, broken.error_code, broken.data, broken.attempts) == \
        ("error", "fatal", INVALID_STRUCTURED_CONTENT, None, 1)
    assert "不要据此回答" in broken.error

    async def sdk_call_tool() -> BaseException | None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "toolkit.mcp.server", "--demo"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            try:
                await session.call_tool("sales_total", {"broken": True})
            except Exception as exc:
                return exc
        return None
    assert isinstance(asyncio.run(sdk_call_tool()), RuntimeError)  # the SDK's own call_tool raises here
