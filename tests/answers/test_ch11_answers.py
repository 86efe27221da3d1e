"""The answers chapter 11 gives to its 想一想 questions are true of the chapter's code and of the toolkit.

Each test reads its claims from the answer's own <details> text (a name, a limit, an error code) and checks them
against a run, so an answer whose wording and the code drift apart fails here."""
from __future__ import annotations

import json
import re
from pathlib import Path

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.agent import run_agent
from toolkit.tools.orders import Outbox, orders_registry

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "11_approval_mcp.ipynb"
QUESTION = "把 4 月所有已支付的订单找出来，给每位客户发一条付款确认通知，最后告诉我一共通知了几位客户、订单总金额是多少。"


def answer(n: int) -> str:
    """The text inside the <details> of the chapter's 想一想 n."""
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and f"**想一想 {n}：**" in source:
            found = re.search(r"<details><summary>答案</summary>(.*?)</details>", source, re.S)
            assert found, f"想一想 {n} has no <details> answer"
            return found.group(1)
    raise AssertionError(f"the chapter has no 想一想 {n}")


def claim(text: str, pattern: str) -> re.Match:
    """The answer's claim matching `pattern`: the test fails, naming it, when the answer no longer says it."""
    found = re.search(pattern, text)
    assert found, f"the answer no longer says {pattern!r}: {text[:200]!r}"
    return found


def long_run(**settings):
    executor = ToolExecutor(result_max_chars=1200)
    outbox = Outbox()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, registry=orders_registry(executor, outbox), executor=executor, max_turns=60, **settings)
    return run, outbox


def test_q1_with_no_setting_the_run_returns_before_the_first_write_instead_of_waiting():
    text = answer(1)
    claim(text, "不会。`approve=None` 不等待")
    stopped = claim(text, r"`stopped` 是 `\"(\w+)\"`").group(1)
    claim(text, "发件箱是空的")
    run, outbox = long_run(approve=None)
    assert run.stopped == stopped and outbox.sent == [] and run.pending.tool == "send_notice"


# --- 5. tools over MCP (a real stdio server, python -m toolkit.mcp.server --demo) -----------------------

def mcp_call(executor, name, **arguments):
    import asyncio

    from toolkit.wire import ToolCall
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(executor.run_tool_call(ToolCall("call_demo", name, arguments)))


def chapter_server():
    """The MCP server as the chapter starts it (its `server = MCPServer(...)` line, run here)."""
    from toolkit.mcp import MCPServer
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        found = re.search(r"^server = (MCPServer\(.*?\))", "".join(cell["source"]), re.M)
        if cell["cell_type"] == "code" and found:
            return eval(found.group(1), {"MCPServer": MCPServer})
    raise AssertionError("the chapter starts no MCPServer")


def test_q2_a_server_that_dies_or_hangs_is_a_retryable_error_result_and_the_next_call_restarts_it():
    text = answer(2)
    crash = claim(text, r"崩溃得到 `(\w+)`").group(1)
    limit, hang = claim(text, r"卡住的调用在 ([\d.]+) 秒（真实时间）后得到 `(\w+)`").groups()
    kind = claim(text, r'`error_type="(\w+)"`').group(1)
    claim(text, "下一次调用重新启动它")
    with chapter_server() as server:
        executor = ToolExecutor(registry=server.registry(), max_retries=0)
        crashed = mcp_call(executor, "exit_now")
        hung = mcp_call(executor, "wait_seconds", seconds=60)  # without the limit: 60 real seconds, then success
        after = mcp_call(executor, "get_weather", city="上海")
        starts = server.starts
    assert (crashed.status, crashed.error_type, crashed.error_code) == ("error", kind, crash)
    assert (hung.status, hung.error_type, hung.error_code) == ("error", kind, hang)
    assert f"在 {limit} 秒内没有返回" in hung.error  # the limit the answer names is the one the chapter sets
    assert after.status == "success" and starts == 3  # started, restarted after the crash and after the hang


def test_q3_structured_content_against_its_output_schema_is_a_fatal_error_not_retried_where_the_sdk_raises():
    import asyncio
    import sys

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from toolkit.mcp import INVALID_STRUCTURED_CONTENT, MCPServer
    text = answer(3)
    code = claim(text, r"错误结果 `(\w+)`").group(1)
    kind = claim(text, r"`error_type` 是 `(\w+)`").group(1)
    claim(text, "`data` 为空")
    said = claim(text, r"模型读到“(.*?)”").group(1)
    claim(text, "MCP SDK 自己的 `call_tool` 遇到这种结果会抛异常")
    with MCPServer(extra_args=["--demo"]) as demo:
        executor = ToolExecutor(registry=demo.registry(), max_retries=3)
        good, broken = mcp_call(executor, "sales_total"), mcp_call(executor, "sales_total", broken=True)
    assert good.status == "success" and good.data == {"total_sales": 9692}
    assert code == INVALID_STRUCTURED_CONTENT
    assert (broken.status, broken.error_type, broken.error_code, broken.data, broken.attempts) == \
        ("error", kind, code, None, 1)  # "重试无用": max_retries=3, one attempt
    assert said in broken.error

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
