"""The answers appendix 07b gives to its 想一想 questions are true of the appendix's own code, and its troubleshooting
section shows each row of the table it reproduces.

The scenarios are the appendix's: the :ignore-results model's run traced back, a conversation missing its tool
results sent to the offline model, the two-step trip question with and without [TASK_CONTEXT]."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import openai
import pytest

from notebook_answers import answer
from toolkit import SimulatedClock, use_clock
from toolkit.agent import SYSTEM_PROMPT, run_agent
from toolkit.llm import Settings, make_client
from toolkit.tools import data_dir, default_registry
from toolkit.verify import check_answer

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "07b_sales_agent_more.ipynb"
QUESTION = "哪个类别销售额最高？总销售额是多少？"
TRIP = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"


def _offline(variant: str = ""):
    return make_client(Settings(base_url=None, model="offline-stand-in" + (f":{variant}" if variant else ""),
                                offline=True))


def test_q1_the_trace_stops_at_the_model_tool_message_and_tool_result_agree_with_the_hand_count():
    assert answer(CHAPTER, 1).startswith("模型说错了")
    client, model = _offline("ignore-results")
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, client=client, model=model)
    verdict = check_answer(run.answer, *run.tool_results, question=QUESTION)
    assert not verdict.ok and 14577 in verdict.unsupported_numbers and "14577" in run.answer
    sent = json.loads(next(m["content"] for m in run.messages if m["role"] == "tool"))
    assert sent["result"]["total_sales"] == run.tool_results[0].data["total_sales"] == 9692
    with open(data_dir() / "sales.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    by_hand = sum(int(r["quantity"]) * int(r["unit_price"]) for r in rows)
    monitors = sum(int(r["quantity"]) * int(r["unit_price"]) for r in rows if r["category"] == "显示器")
    assert (by_hand, monitors) == (9692, 4495)


def test_q2_without_any_result_the_model_asks_again_without_the_tool_message_the_api_refuses_with_400():
    said = answer(CHAPTER, 2)
    assert "`finish_reason` 又是 `tool_calls`" in said and "HTTP 400" in said
    client, model = _offline()
    registry = default_registry()
    asked = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": QUESTION}]
    first = client.chat.completions.create(model=model, messages=asked, tools=registry.openai_tools()).choices[0]
    again = client.chat.completions.create(model=model, messages=asked, tools=registry.openai_tools()).choices[0]
    assert again.finish_reason == "tool_calls" and again.message.tool_calls[0].function.name == "analyze_sales_csv"
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=model, messages=asked + [first.message.model_dump(exclude_none=True)],
                                       tools=registry.openai_tools())
    assert refused.value.status_code == 400 and first.message.tool_calls[0].id in refused.value.message


def test_q3_the_scripted_model_checks_only_the_weather_without_task_context_and_both_steps_with_it():
    said = answer(CHAPTER, 3)
    assert "只调用 `get_weather`" in said and "`search_flights`" in said and "脚本" in said
    with use_clock(SimulatedClock(seed=0)):
        forgetful = run_agent(TRIP, task_context=False)
        trip = run_agent(TRIP)
    assert [r.name for r in forgetful.tool_results] == ["get_weather"]
    assert [r.name for r in trip.tool_results] == ["get_weather", "search_flights"]
    assert check_answer(trip.answer, *trip.tool_results, question=TRIP).ok


def test_every_row_of_the_troubleshooting_table_is_reproduced_with_what_the_student_sees():
    """Section 2 claims each row of the table is reproduced; the stored outputs (nbval compares them with a fresh
    run) show the symptom the row names."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    start = next(i for i, c in enumerate(cells) if "## 2. 排错" in "".join(c["source"]))
    end = next(i for i, c in enumerate(cells) if "## 3. " in "".join(c["source"]))
    shown = "\n".join("".join(o.get("text", "")) for c in cells[start:end] if c["cell_type"] == "code"
                      for o in c["outputs"])
    assert "finish_reason: stop ；tool_calls: None" in shown                       # the model did not call the tool
    assert "① 什么都没追加 → finish_reason: tool_calls" in shown                    # the tool ran, the model never saw it
    assert "② 漏了 tool 消息 → HTTP 400" in shown and "tool 消息，缺少 call_" in shown
    assert shown.count("ConfigError：") == 2 and "占位文字" in shown and "https://" in shown   # a bad .env file
    assert "认证失败（HTTP 401）" in shown
    assert "模型没有返回文本回答（finish_reason=length）" in shown                  # the reply has no text
    assert "结束方式： max_turns" in shown
    dotenv_cell = next("".join(c["source"]) for c in cells[start:end] if "bad_dotenvs" in "".join(c["source"]))
    assert "tempfile.TemporaryDirectory()" in dotenv_cell and "dotenv_path=dotenv" in dotenv_cell
