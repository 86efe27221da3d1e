"""One envelope opened once, and a tool's knowledge kept with the tool (issue 8, points 3 and 4).

The stock-price tool below lives in this file alone: its function, its schema
and its ToolKnowledge. It runs through run_agent with the offline model,
evaluate_tool_result and check_answer without any core module knowing its name.
"""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, evaluate_tool_result, use_clock
from toolkit.agent import run_agent
from toolkit.knowledge import ToolKnowledge, forget, knowledge_for
from toolkit.messages import format_tool_message
from toolkit.results import unwrap_envelope
from toolkit.tools import default_registry
from toolkit.verify import check_answer

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = {"TOOLKIT_DOTENV": "none", "MODEL_NAME": "offline-stand-in"}


@pytest.fixture
def offline(monkeypatch):
    for name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")


def _execute(name: str, arguments: dict, registry: ToolRegistry):
    async def go():
        return await ToolExecutor().run_tool_call({"id": "c1", "function": {"name": name,
                                                                           "arguments": json.dumps(arguments)}},
                                                  registry)
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(go())


# --- 8.3 one envelope ---------------------------------------------------------------------------

def test_the_model_reads_one_status_and_the_sales_data_itself():
    result = _execute("analyze_sales_csv", {}, default_registry())
    content = format_tool_message(result.name, "c1", result)["content"]
    assert content.count('"status"') == 1
    payload = json.loads(content)
    assert payload["status"] == "success"
    assert payload["result"]["total_sales"] == 9692 and payload["result"]["highest_category"] == "显示器"
    assert set(payload["result"]) >= {"row_count", "category_sales"} and "source" not in payload["result"]
    assert result.source == ["data/input/sales.csv"]  # kept, as metadata beside the data


def test_a_tool_error_envelope_is_one_error_status_with_its_code_and_details():
    result = _execute("analyze_sales_csv", {"path": "missing.csv"}, default_registry())
    payload = json.loads(format_tool_message(result.name, "c1", result)["content"])
    assert payload["status"] == "error" and payload["error_code"] == "FILE_NOT_FOUND"
    assert content_statuses(payload) == 1


def content_statuses(value) -> int:
    return len(re.findall(r'"status"', json.dumps(value, ensure_ascii=False)))


@pytest.mark.parametrize("value, expected", [
    ({"status": "ok", "data": {"x": 1}, "source": ["a"], "error": None}, ({"x": 1}, ["a"], None)),
    ({"status": "error", "data": None, "source": [], "error": {"code": "E", "message": "m", "line": 4}},
     ({"line": 4}, [], "E")),
    ({"status": "error", "error": "boom"}, (None, None, "TOOL_ERROR")),
    ({"status": "ok", "data": 1, "extra": 2}, ({"status": "ok", "data": 1, "extra": 2}, None, None)),
    ([1, 2], ([1, 2], None, None)),
])
def test_unwrap_envelope_opens_only_the_envelope_shape(value, expected):
    data, source, info = unwrap_envelope(value)
    assert (data, source, info.error_code if info else None) == expected


def test_a_raw_envelope_given_to_format_tool_message_is_opened_the_same_way():
    from toolkit.tools import analyze_sales_csv

    payload = json.loads(format_tool_message("analyze_sales_csv", "c1", analyze_sales_csv())["content"])
    assert payload["status"] == "success" and payload["result"]["total_sales"] == 9692


# --- 8.4 a new tool from this file alone -----------------------------------------------------------

PRICES = {"ACME": 123.45, "BETA": 8.5}


def get_stock_price(symbol: str) -> dict:
    """The (fictional) latest price of a stock symbol, in the course's envelope."""
    if symbol not in PRICES:
        return {"status": "error", "data": None, "source": ["test-exchange"],
                "error": {"code": "SYMBOL_NOT_FOUND", "message": f"没有股票代码 {symbol}"}}
    return {"status": "ok", "data": {"symbol": symbol, "price": PRICES[symbol], "currency": "元"},
            "source": ["test-exchange"], "error": None}


def wrong_direction(answer: str, data: dict) -> list[str]:
    return ["回答说股价上涨，工具结果没有涨跌信息"] if "上涨" in answer else []


STOCK = ToolKnowledge(
    required={"price": "股价"},
    answer_rules=(wrong_direction,),
    suggestions={"SYMBOL_NOT_FOUND": "请用户确认股票代码，不要猜一个价格"},
    labels={"symbol": "股票代码", "price": "最新股价"},
    render=lambda tool, data, say: f"{say(data['symbol'])} 的最新股价是 {say(data['price'])} {say(data['currency'])}。",
)


@pytest.fixture
def stock_registry():
    registry = ToolRegistry()
    STOCK.register(registry, get_stock_price, description="查询某只股票的最新股价（教学用虚构行情）",
                   parameters={"type": "object", "properties": {
                       "symbol": {"type": "string", "enum": sorted(PRICES), "description": "股票代码"}},
                       "required": ["symbol"], "additionalProperties": False})
    yield registry
    forget("get_stock_price")


def test_a_new_tool_runs_through_the_agent_decisions_and_answer_check(offline, stock_registry):
    run = run_agent("ACME 的股价现在是多少？", registry=stock_registry)
    assert run.stopped == "answered", run.answer
    assert [r.name for r in run.tool_results] == ["get_stock_price"]
    assert "ACME 的最新股价是 123.45 元" in run.answer  # the tool's own wording, through the offline model
    result = run.tool_results[0]
    assert result.data == {"symbol": "ACME", "price": 123.45, "currency": "元"}
    assert check_answer(run.answer, result).ok
    missing_price = check_answer("ACME 查到了。", result)
    assert not missing_price.ok and any("股价" in m and "123.45" in m for m in missing_price.mismatches)
    assert not check_answer("ACME 上涨到 123.45 元。", result).ok  # the tool's own answer rule
    assert evaluate_tool_result(result, "ACME 的股价")["action"] == "present_directly"


def test_a_new_tools_error_gets_its_own_suggestion(stock_registry):
    failed = _execute("get_stock_price", {"symbol": "ACME"}, stock_registry)
    assert failed.ok
    PRICES["GONE"] = 1.0
    try:
        stock_registry.get("get_stock_price").parameters["properties"]["symbol"]["enum"].append("GONE")
        del PRICES["GONE"]
        failed = _execute("get_stock_price", {"symbol": "GONE"}, stock_registry)
    finally:
        PRICES.pop("GONE", None)
    assert failed.error_code == "SYMBOL_NOT_FOUND"
    decision = evaluate_tool_result(failed, "GONE 的股价")
    assert decision["action"] == "report_error" and decision["suggestion"] == "请用户确认股票代码，不要猜一个价格"


def test_the_sales_tools_knowledge_lives_with_the_sales_tool():
    from toolkit.tools import sales

    assert knowledge_for("analyze_sales_csv") is sales.SALES_KNOWLEDGE
    assert "INVALID_SALES_CSV" in sales.SALES_KNOWLEDGE.suggestions


CORE = ["results.py", "retry.py", "executor.py", "parsing.py", "messages.py", "decisions.py", "verify.py",
        "knowledge.py", "readback.py", "task_context.py", "safety.py", "clock.py", "agent", "llm"]
TOOL_WORDS = ("analyze_sales_csv", "get_weather", "search_flights", "INVALID_SALES_CSV", "highest_category",
              "total_sales", "category_sales", "flight_no", "temp_c", "sales.csv")


# results.py's docstring names the sales tool's code as an example of a tool's own code: a word, not knowledge
ALLOWED = {("toolkit/results.py", "INVALID_SALES_CSV")}


def test_no_core_module_names_a_tool_or_its_fields():
    found = []
    for entry in CORE:
        path = ROOT / "toolkit" / entry
        for file in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            text = file.read_text(encoding="utf-8")
            found += [f"{file.relative_to(ROOT)}: {word}" for word in TOOL_WORDS
                      if word in text and (str(file.relative_to(ROOT)), word) not in ALLOWED]
    assert found == []
