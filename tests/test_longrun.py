"""The long run of chapter 10: 20+ turns of paging through a cut result and writing notices that need approval,
with and without clearing old results, on the offline model through the real openai SDK over HTTP."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, use_clock
from toolkit.agent import resume, run_agent
from toolkit.clearing import CLEARED_MARK, ClearPolicy
from toolkit.tools.orders import Outbox, orders_registry, query_orders

QUESTION = "把 4 月所有已支付的订单找出来，给每位客户发一条付款确认通知，最后告诉我一共通知了几位客户、订单总金额是多少。"
ORDERS = json.loads((Path(__file__).resolve().parent.parent / "data" / "input" / "query_orders_200.json")
                    .read_text(encoding="utf-8"))
PAID = [o for o in ORDERS if o["status"] == "已支付"]
CUSTOMERS = list(dict.fromkeys(o["customer"] for o in PAID))


def _run(approve=True, clear=None, max_turns=60, budget=1200):
    executor = ToolExecutor(result_max_chars=budget)
    outbox = Outbox()
    registry = orders_registry(executor, outbox)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, registry=registry, executor=executor, max_turns=max_turns, approve=approve,
                        clear=clear)
    return run, outbox


def _sizes(run) -> list[int]:
    return [step["context_chars"] for step in run.transcript if step["kind"] == "model"]


def test_the_long_run_pages_through_every_order_and_writes_to_each_customer_once():
    run, outbox = _run()
    assert run.ok and run.turns >= 20, (run.stopped, run.turns)
    assert [n["customer"] for n in outbox.sent] == CUSTOMERS  # one notice each, in the order the pages show them
    for notice in outbox.sent:  # ... about all of that customer's orders, wherever the pages show them
        assert notice["order_ids"] == [o["order_id"] for o in PAID if o["customer"] == notice["customer"]]
    assert any(len(n["order_ids"]) > 1 for n in outbox.sent), "some customer has orders on two pages"
    total = sum(o["amount"] for o in PAID)
    assert f"共找到 {len(PAID)} 笔已支付订单，涉及 {len(CUSTOMERS)} 位客户，订单总金额 {total}" in run.answer
    assert f"已给 {len(CUSTOMERS)} 位客户发送通知" in run.answer
    reads = [s for s in run.transcript if s["kind"] == "tool" and s["name"] == "read_more"]
    assert len(reads) >= 4 and all(s["status"] == "success" for s in reads)


def test_a_cut_result_carries_its_read_more_handle_only_where_read_more_is_offered():
    run, _ = _run(max_turns=2)
    first = json.loads(run.transcript[1]["content"])
    assert first["more"]["result_id"] >= 1 and "read_more(result_id=" in first["more"]["hint"]
    assert list(first)[:2] == ["status", "more"]
    executor = ToolExecutor(result_max_chars=1200)
    registry = ToolRegistry()
    for tool in orders_registry(executor):
        if tool.name != "read_more":
            registry.add(tool)
    with use_clock(SimulatedClock(seed=0)):
        plain = run_agent(QUESTION, registry=registry, executor=executor, max_turns=2, approve=True)
    assert "more" not in json.loads(plain.transcript[1]["content"])


def test_clearing_keeps_the_context_smaller_and_the_outcome_the_same():
    full, outbox_full = _run()
    cleared, outbox_cleared = _run(clear=ClearPolicy(budget_chars=3000, keep_last=3, exempt=("send_notice",)))
    assert cleared.answer == full.answer and outbox_cleared.sent == outbox_full.sent
    assert len(_sizes(cleared)) == len(_sizes(full))
    assert max(_sizes(cleared)) < 0.8 * max(_sizes(full))
    assert all(CLEARED_MARK not in json.dumps(m, ensure_ascii=False) for m in cleared.messages), \
        "run.messages keeps everything; only what is sent is cleared"


def test_the_model_keeps_what_it_needs_in_its_notes_so_even_clearing_everything_loses_nothing():
    """Budget 0, only the newest result kept: every page is gone from what the model is sent by the next turn,
    yet its notes (its own messages, never cleared) carry the customers, orders and amounts to the answer."""
    full, outbox_full = _run()
    bare, outbox_bare = _run(clear=ClearPolicy(budget_chars=0, keep_last=1))
    assert bare.answer == full.answer and outbox_bare.sent == outbox_full.sent
    notes = [m["content"] for m in bare.messages if m["role"] == "assistant" and "【笔记】" in (m["content"] or "")]
    assert len(notes) == len([s for s in bare.transcript if s["kind"] == "tool" and s["name"] == "read_more"])


def test_without_a_setting_the_run_pauses_before_the_first_write_and_resume_goes_on():
    run, outbox = _run(approve=None)
    assert run.stopped == "needs_approval" and not run.ok and outbox.sent == []
    assert run.pending.tool == "send_notice" and run.pending.arguments["customer"] == CUSTOMERS[0]
    assert "send_notice" in run.pending.describe() and "resume(run, True)" in run.answer
    run = resume(run, True)
    assert run.stopped == "needs_approval" and [n["customer"] for n in outbox.sent] == CUSTOMERS[:1]
    assert run.pending.arguments["customer"] == CUSTOMERS[1]
    run = resume(run, False, "这位客户要求不再接收通知")
    denied = [s for s in run.transcript if s["kind"] == "tool" and s["error_code"] == "APPROVAL_DENIED"]
    assert len(denied) == 1 and "这位客户要求不再接收通知" in denied[0]["content"]
    assert [n["customer"] for n in outbox.sent] == CUSTOMERS[:1]
    while run.stopped == "needs_approval":
        run = resume(run, True)
    _, everything = _run()
    pairs = [(n["customer"], n["order_ids"]) for n in everything.sent]
    assert run.ok and [(n["customer"], n["order_ids"]) for n in outbox.sent] == pairs[:1] + pairs[2:]  # the 2nd denied
    assert f"没有发送的 1 位：{CUSTOMERS[1]}" in run.answer
    with pytest.raises(ValueError, match="没有在等待审批"):
        resume(run, True)


@pytest.mark.parametrize("approve, reason", [
    (False, "设置为拒绝所有写操作"),
    (lambda pending: 1 / 0, "审批函数出错"),
    (lambda pending: "maybe" if False else 42, "按拒绝处理"),
])
def test_a_denying_or_broken_setting_never_lets_a_write_through(approve, reason):
    run, outbox = _run(approve=approve)
    assert run.ok and outbox.sent == []
    denied = [s for s in run.transcript if s["kind"] == "tool" and s["error_code"] == "APPROVAL_DENIED"]
    asked = [s for s in run.transcript if s["kind"] == "tool" and s["name"] == "send_notice"]
    assert denied == asked and len(denied) >= len(CUSTOMERS) and all(reason in s["content"] for s in denied)
    assert f"没有发送的 {len(CUSTOMERS)} 位" in run.answer


def test_an_approval_function_sees_the_call_and_can_refuse_one_customer():
    seen = []

    def approve(pending):
        seen.append(pending.arguments["customer"])
        return "客户要求暂停通知" if pending.arguments["customer"] == CUSTOMERS[3] else True

    run, outbox = _run(approve=approve)
    assert list(dict.fromkeys(seen)) == CUSTOMERS and CUSTOMERS[3] not in [n["customer"] for n in outbox.sent]
    assert {n["customer"] for n in outbox.sent} == set(CUSTOMERS) - {CUSTOMERS[3]}
    assert f"没有发送的 1 位：{CUSTOMERS[3]}" in run.answer


def _ask(question: str, budget: int = 1200):
    executor = ToolExecutor(result_max_chars=budget)
    outbox = Outbox()
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(question, registry=orders_registry(executor, outbox), executor=executor, max_turns=60,
                        approve=True)
    steps = [s for s in run.transcript if s["kind"] == "tool"]
    return run, steps, outbox


def _shown(steps) -> set[str]:
    """The order ids the cut query result itself shows."""
    return {r["order_id"] for r in json.loads(steps[0]["content"])["result"]["rows"]}


def _read_to_the_end(steps) -> bool:
    reads = [json.loads(s["content"])["result"] for s in steps if s["name"] == "read_more"]
    return bool(reads) and reads[-1]["next_offset"] is None and [r["offset"] for r in reads][0] == 0


LATE = next(c for c in reversed(CUSTOMERS) if sum(o["customer"] == c for o in PAID) == 1)  # one order, a late page


@pytest.mark.parametrize("question, check", [
    (f"查一下 4 月已支付的订单，{LATE} 的订单号和金额是多少？",
     lambda run, steps: _read_to_the_end(steps) and [o for o in PAID if o["customer"] == LATE][0]["order_id"] not in
     _shown(steps) and all(f"{o['order_id']}（金额 {o['amount']}）" in run.answer for o in PAID if o["customer"] == LATE)),
    ("列出 4 月所有已支付订单的订单号",
     lambda run, steps: _read_to_the_end(steps) and all(o["order_id"] in run.answer for o in PAID)
     and f"共 {len(PAID)} 笔" in run.answer),
    ("4 月已支付订单的总金额是多少？",
     lambda run, steps: _read_to_the_end(steps) and f"总金额 {sum(o['amount'] for o in PAID)}" in run.answer),
    ("客户003 在 4 月有哪些已支付订单？",
     lambda run, steps: _read_to_the_end(steps) and "客户003 有 2 笔已支付订单" in run.answer),
    ("4 月已支付的第一笔订单是哪位客户的？",
     lambda run, steps: [s["name"] for s in steps] == ["query_orders"] and PAID[0]["order_id"] in run.answer
     and PAID[0]["customer"] in run.answer),
], ids=["a-customer-on-a-late-page", "every-order-id", "the-total", "a-customer-on-two-pages", "the-first-order"])
def test_the_offline_model_reads_as_many_pages_as_the_question_needs(question, check):
    run, steps, outbox = _ask(question)
    assert run.ok and outbox.sent == [] and "send_notice" not in [s["name"] for s in steps]
    assert all(s["status"] == "success" for s in steps) and check(run, steps), run.answer


def test_a_question_about_orders_without_a_status_is_asked_back_not_sent_to_the_write_tool():
    run, steps, outbox = _ask("4 月的第一笔订单是哪位客户的？")
    assert steps == [] and outbox.sent == [] and "需要知道订单状态" in run.answer


def test_notices_to_the_customers_a_question_names_go_to_them_only():
    run, steps, outbox = _ask("提醒客户003 他 4 月已支付的订单已付款成功")
    assert [n["customer"] for n in outbox.sent] == ["客户003"]
    assert outbox.sent[0]["order_ids"] == [o["order_id"] for o in PAID if o["customer"] == "客户003"]


def test_a_cut_results_note_and_suggestion_say_read_more_like_its_handle():
    _, steps, _ = _ask("列出 4 月所有已支付订单的订单号")
    first = json.loads(steps[0]["content"])
    way = f"read_more(result_id={first['more']['result_id']})"
    assert way in first["result"]["note"] and way in first["decision"]["suggestion"]
    assert "缩小" not in steps[0]["content"]
    executor = ToolExecutor(result_max_chars=1200)
    registry = ToolRegistry()
    for tool in orders_registry(executor):
        if tool.name != "read_more":
            registry.add(tool)
    with use_clock(SimulatedClock(seed=0)):
        plain = run_agent("列出 4 月所有已支付订单的订单号", registry=registry, executor=executor, max_turns=2)
    assert "read_more" not in plain.transcript[1]["content"]  # no read_more offered: nothing points at it


def test_a_page_that_cannot_be_read_is_said_in_the_answer():
    executor = ToolExecutor(result_max_chars=1200, history_limit=1)  # a second result releases the first output
    outbox = Outbox()
    registry = orders_registry(executor, outbox)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent("列出 4 月所有已支付订单的订单号", registry=registry, executor=executor, max_turns=60)
    reads = [s for s in run.transcript if s["kind"] == "tool" and s["name"] == "read_more"]
    assert run.ok and reads and reads[-1]["status"] == "error" and "续读失败" in run.answer


def test_query_orders_refuses_an_unknown_status():
    assert query_orders("已取消")["error"]["code"] == "INVALID_ARGUMENTS"
    assert [o["order_id"] for o in query_orders("已支付", "上海")["data"]] == \
        [o["order_id"] for o in PAID if o["city"] == "上海"]


def test_a_students_clear_function_plugs_in_and_a_broken_one_sends_the_whole_list():
    def keep_everything(messages):  # clears nothing, but is a function messages -> list: it plugs in
        return messages

    run, _ = _run(clear=keep_everything, max_turns=4)
    assert not any("clear_error" in s for s in run.transcript)

    def broken(messages):
        raise KeyError("content")

    run, _ = _run(clear=broken, max_turns=4)
    errors = [s["clear_error"] for s in run.transcript if s["kind"] == "model"]
    assert errors and all("插件 clear 出错（KeyError" in e and "完整的对话" in e for e in errors)
    run, _ = _run(clear=lambda messages: "not a list", max_turns=2)
    assert "clear 应返回消息列表" in run.transcript[0]["clear_error"]
    with pytest.raises(ValueError, match="clear"):
        _run(clear="yes")


def test_the_approval_panel_resumes_the_run_with_each_click():
    from toolkit.widgets import ApprovalPanel

    run, outbox = _run(approve=None)
    panel = ApprovalPanel(run)
    assert "等待审批" in repr(panel) and CUSTOMERS[0] in panel.view.value and not panel.approve_button.disabled
    panel.approve_button.click()
    assert [n["customer"] for n in outbox.sent] == CUSTOMERS[:1] and CUSTOMERS[1] in panel.view.value
    panel.reason.value = "客户退订了通知"
    panel.deny_button.click()
    assert panel.decisions[1][1:] == (False, "客户退订了通知") and panel.reason.value == ""
    while panel.run.stopped == "needs_approval":
        panel.approve()
    assert panel.run.ok and panel.approve_button.disabled and "运行结束" in repr(panel)
    assert f"没有发送的 1 位：{CUSTOMERS[1]}" in panel.view.value
    panel.deny("太晚了")  # nothing waits: a late click changes nothing
    assert len(panel.decisions) == len([s for s in panel.run.transcript if s["kind"] == "tool"
                                        and s["name"] == "send_notice"])


def test_the_context_chart_draws_one_line_per_run():
    from toolkit.viz import context_growth, context_sizes

    full, _ = _run()
    cleared, _ = _run(clear=ClearPolicy(budget_chars=3000))
    fig = context_growth({"不清除": full, "清除旧结果": cleared}, budget=3000)
    lines = {line.get_gid(): list(line.get_ydata()) for line in fig.axes[0].lines if line.get_gid()}
    assert lines["run-不清除"] == context_sizes(full) and lines["run-清除旧结果"] == context_sizes(cleared)
    assert "budget" in lines and len(context_sizes(full)) == full.turns
    with pytest.raises(ValueError):
        context_growth({"空": []})


def _down_with_a_writing_fallback(primary_needs_approval: bool = False):
    """post_notice always answers 503; its fallback post_notice_backup writes, and needs approval."""
    sent: list[str] = []
    schema = {"type": "object", "properties": {"customer": {"type": "string", "enum": ["客户003", "客户009"]}},
              "required": ["customer"], "additionalProperties": False}

    def post_notice(customer: str) -> dict:
        return {"status": "error", "data": None, "source": [],
                "error": {"code": "UNAVAILABLE", "message": "503 服务不可用", "http_status": 503}}

    def post_notice_backup(customer: str) -> dict:
        sent.append(customer)
        return {"status": "success", "data": {"sent": customer}, "source": ["backup"], "error": None}

    registry = ToolRegistry()
    registry.register(post_notice, name="post_notice", description="给客户发送通知", parameters=schema, writes=True,
                      fallback="post_notice_backup", needs_approval=primary_needs_approval)
    registry.register(post_notice_backup, name="post_notice_backup", description="备用通道：给客户发送通知",
                      parameters=schema, writes=True, needs_approval=True)
    return registry, sent


def _notify(registry, approve):
    with use_clock(SimulatedClock(seed=0)):
        return run_agent("给客户003 发送通知", registry=registry, executor=ToolExecutor(registry=registry, max_retries=0),
                         approve=approve)


def test_a_write_reached_through_a_fallback_waits_for_approval_too():
    registry, sent = _down_with_a_writing_fallback()
    run = _notify(registry, None)
    assert run.stopped == "needs_approval" and sent == [], "the fallback's write must not run unasked"
    assert run.pending.tool == "post_notice" and run.pending.fallback == "post_notice_backup"
    assert "post_notice_backup" in run.pending.describe() and "审批" in run.pending.describe()
    run = resume(run, True)
    assert run.ok and sent == ["客户003"]
    assert [s["name"] for s in run.transcript if s["kind"] == "tool"] == ["post_notice_backup"]
    registry, sent = _down_with_a_writing_fallback()
    run = _notify(registry, False)
    assert run.ok and sent == [] and [s["error_code"] for s in run.transcript if s["kind"] == "tool"] == \
        ["APPROVAL_DENIED"]
    registry, sent = _down_with_a_writing_fallback(primary_needs_approval=True)
    run = _notify(registry, None)
    assert run.pending.fallback is None and run.pending.describe().startswith("模型要调用写操作 post_notice")


def test_approval_is_the_loops_job_the_executor_runs_what_it_is_given():
    """Documented in toolkit.approval: code that calls the executor directly is the one deciding."""
    import asyncio

    from toolkit.wire import ToolCall

    executor = ToolExecutor(result_max_chars=1200)
    outbox = Outbox()
    registry = orders_registry(executor, outbox)
    arguments = {"customer": "客户003", "order_ids": ["SO-2026-0028"], "message": "您好"}
    result = asyncio.run(executor.run_tool_call(ToolCall("c1", "send_notice", arguments), registry))
    assert registry.get("send_notice").needs_approval and result.ok and len(outbox.sent) == 1
