"""The offline model on a long task: page through a cut result, act on each page, keep notes, answer at the end.

When the tools offered include query_orders, read_more and send_notice (chapter 10) and the question names an
order status, the model works as a careful agent would over many turns:

1. query_orders(status, city) once;
2. the result is cut (it carries {"more": {"result_id"}}): read_more(result_id, offset) page by page;
3. after each page, a note in its own message ("【笔记】…": the page's customers, their orders and amounts, the
   next offset), so nothing it needs lives only in a tool result that may be cleared later;
4. send_notice to each customer of the page it has not written to yet (a denial is an answer too: it moves on);
5. when every page is read and every customer handled, the answer: how many orders, customers and the total
   amount (from its notes), who got a notice and who did not (from the results of its send_notice calls).

Like the rest of the offline model it is a pure function of the request: its state is its notes and calls.
"""
from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from .rendering import TAG
from .request import OfferedTool, View

__all__ = ["longrun_reply", "Turn"]


class Turn(NamedTuple):
    """What the model says this turn: text (a note, or the answer), and the tool call, if any."""

    text: str | None = None
    tool: str | None = None
    arguments: str | None = None

TOOLS = {"query_orders", "read_more", "send_notice"}
STATUSES = ("已支付", "已发货", "已完成", "已退款")
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都")
NOTE = "【笔记】"
_HANDLE = re.compile(r"result_id[\"']?\s*[=:]\s*(\d+)")
_NOTE_PAGE = re.compile(r"第 (\d+) 段（offset (\d+) 起）：(.*?)；(?:下一段 offset=(\d+)|已读完)")
MESSAGE = "您好，您的订单{orders}已付款成功，我们会尽快安排发货。"


def _args(call: dict) -> dict:
    raw = call.get("arguments")
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _notes(view: View) -> list[tuple[int, int, dict[str, list[tuple[str, int]]], int | None]]:
    """(page number, offset, customer -> [(order id, amount)], next offset or None) of each note, in order."""
    found = []
    for message in view.after:
        content = message.get("content") if message.get("role") == "assistant" else None
        if not isinstance(content, str) or NOTE not in content:
            continue
        m = _NOTE_PAGE.match(content, content.find(NOTE) + len(NOTE))  # anchored: one attempt per message
        if not m:
            continue
        customers: dict[str, list[tuple[str, int]]] = {}
        for part in filter(None, m.group(3).split("、")):
            name, _, orders = part.partition("：")
            customers[name] = [(o.split("/")[0], int(o.split("/")[1])) for o in orders.split("+") if "/" in o]
        found.append((int(m.group(1)), int(m.group(2)), customers, int(m.group(4)) if m.group(4) else None))
    return found


def _page_records(text: str) -> list[dict]:
    """The whole records of a page of line-per-record JSON text (a line cut at the page's edge is skipped)."""
    records = []
    for line in text.splitlines():
        value = _json(line.strip().rstrip(","))
        if isinstance(value, dict) and "customer" in value:
            records.append(value)
    return records


def _note(page: int, offset: int, records: list[dict], next_offset: int | None) -> str:
    customers: dict[str, list[str]] = {}
    for r in records:
        customers.setdefault(str(r["customer"]), []).append(f"{r['order_id']}/{int(r['amount'])}")
    body = "、".join(f"{c}：{'+'.join(orders)}" for c, orders in customers.items())
    tail = f"下一段 offset={next_offset}" if next_offset is not None else "已读完"
    return f"{NOTE}第 {page} 段（offset {offset} 起）：{body}；{tail}"


def _notice_call(customer: str, orders: list[tuple[str, int]]) -> tuple[str, str]:
    ids = [o for o, _ in orders]
    return "send_notice", json.dumps({"customer": customer, "order_ids": ids,
                                      "message": MESSAGE.format(orders="、".join(ids))}, ensure_ascii=False)


def _answer(view: View, status: str, notes: list) -> str:
    orders: dict[str, int] = {}
    customers: set[str] = set()
    for _, _, page_customers, _ in notes:
        for name, items in page_customers.items():
            customers.add(name)
            orders.update(items)
    sent, refused, unknown = [], [], []
    for call, content in view.results:
        if call.get("name") != "send_notice":
            continue
        who = str(_args(call).get("customer", "?"))
        value = _json(content)
        state = value.get("status") if isinstance(value, dict) else None
        (sent if state == "success" else refused if state == "error" else unknown).append(who)
    sent, refused, unknown = (list(dict.fromkeys(names)) for names in (sent, refused, unknown))
    lines = [f"{TAG}共找到 {len(orders)} 笔{status}订单，涉及 {len(customers)} 位客户，订单总金额 {sum(orders.values())}。",
             f"已给 {len(sent)} 位客户发送通知。"]
    if refused:
        lines.append(f"没有发送的 {len(refused)} 位：{'、'.join(refused)}（写操作被拒绝或失败，未重试）。")
    if unknown:
        lines.append(f"另有 {len(unknown)} 位的发送回执已从对话中清除，无法确认是否发出：{'、'.join(unknown)}。")
    return "\n".join(lines)


def longrun_reply(view: View, tools: list[OfferedTool]) -> Turn | None:
    """The next step of the long task, or None when this is not one (the honest model answers as usual)."""
    if not TOOLS <= {t.name for t in tools}:
        return None
    status = next((s for s in STATUSES if s in view.question), None)
    if status is None or not any(w in view.question for w in ("通知", "提醒")):
        return None
    city = next((c for c in CITIES if c in view.question), None)
    query = [(call, content) for call, content in view.results if call.get("name") == "query_orders"]
    if not query:
        return Turn(tool="query_orders", arguments=json.dumps({"status": status, **({"city": city} if city else {})},
                                                               ensure_ascii=False))
    handle = _HANDLE.search(query[0][1])
    notes = _notes(view)
    handled = {str(order) for call in view.calls.values() if call.get("name") == "send_notice"
               for order in (_args(call).get("order_ids") or [])}  # orders already written about
    note_text = None
    last_call, last_content = view.results[-1]
    if last_call.get("name") == "read_more":
        page = _json(last_content)
        data = page.get("result") if isinstance(page, dict) else None
        if isinstance(data, dict) and "text" in data and not any(o == data.get("offset") for _, o, _, _ in notes):
            records = _page_records(str(data["text"]))
            note_text = _note(len(notes) + 1, int(data.get("offset") or 0), records, data.get("next_offset"))
            notes = notes + _notes(View(view.question, [{"role": "assistant", "content": note_text}]))
    elif handle is None:  # the whole result fitted: one page, noted from the query's own result
        result = _json(query[0][1])
        records = result.get("result") if isinstance(result, dict) else None
        if isinstance(records, list) and not notes:
            note_text = _note(1, 0, [r for r in records if isinstance(r, dict) and "customer" in r], None)
            notes = _notes(View(view.question, [{"role": "assistant", "content": note_text}]))
    for _, _, customers, _ in notes:
        for name, orders in customers.items():
            new = [o for o in orders if o[0] not in handled]
            if new:  # a customer met again on a later page gets a notice about the new orders only
                tool, arguments = _notice_call(name, new)
                return Turn(text=note_text, tool=tool, arguments=arguments)
    if handle is not None:
        nxt = 0 if not notes else notes[-1][3]
        if nxt is not None:
            return Turn(text=note_text, tool="read_more",
                         arguments=json.dumps({"result_id": int(handle.group(1)), "offset": nxt}))
    return Turn(text=_answer(view, status, notes) if note_text is None else note_text + "\n" + _answer(view, status, notes))
