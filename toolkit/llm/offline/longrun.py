"""The offline model over paged orders: page through a cut result as far as the question needs, keep notes, act.

When the tools offered include query_orders and read_more (chapter 10) and the question names an order status,
the model works as a careful agent would over many turns (a question about orders that names no status is
asked back, never sent to another tool):

1. query_orders(status, city) once;
2. what the question needs decides how far it reads. The first order of the status: the rows the cut result
   shows are enough. Anything else (a named customer, every order id, a count or a total, notices to every
   customer) needs every order, so while the result is cut ({"more": {"result_id"}}) it calls
   read_more(result_id, offset) page by page until next_offset is null;
3. after each page, a note in its own message ("【笔记】…": the page's customers, their orders and amounts, the
   next offset), so nothing it needs lives only in a tool result that may be cleared later;
4. when asked to notify (通知 / 提醒, with send_notice offered), one send_notice per customer (or per customer the
   question names) once every page is read, about all of that customer's orders (a denial is an answer too: it
   moves on);
5. the answer from its notes: the first order; a customer's orders; every order id; or, after notices, how many
   orders, customers and the total, who got a notice and who did not (from the results of its send_notice calls).
   A page it could not read is said in the answer, never guessed.

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


def _by_customer(notes: list) -> dict[str, list[tuple[str, int]]]:
    """Every customer in the notes, in the order the pages show them, with all their orders from every page."""
    merged: dict[str, list[tuple[str, int]]] = {}
    for _, _, page_customers, _ in notes:
        for name, items in page_customers.items():
            mine = merged.setdefault(name, [])
            mine += [o for o in items if o not in mine]
    return merged


def _orders(notes: list) -> list[tuple[str, int]]:
    """Every order in the notes, page by page, each once."""
    return list(dict.fromkeys(o for _, _, page_customers, _ in notes for items in page_customers.values()
                              for o in items))


def _named_customers(question: str) -> list[str]:
    """The customers the question names (客户 and three digits, as the teaching data writes them)."""
    found, at = [], question.find("客户")
    while at != -1:
        digits = question[at + 2:at + 5]
        if len(digits) == 3 and all(c in "0123456789" for c in digits):
            found.append("客户" + digits)
        at = question.find("客户", at + 2)
    return list(dict.fromkeys(found))


def _first_row(content: str) -> dict | None:
    """The first order the query's own (cut) result shows, if it still shows one (a cleared one does not)."""
    value = _json(content)
    result = value.get("result") if isinstance(value, dict) else None
    rows = result.get("rows") if isinstance(result, dict) else result if isinstance(result, list) else None
    first = rows[0] if isinstance(rows, list) and rows else None
    return first if isinstance(first, dict) and "customer" in first and "order_id" in first else None


def _notices_answer(view: View, status: str, notes: list) -> list[str]:
    customers = _by_customer(notes)
    orders = dict(o for items in customers.values() for o in items)
    sent: list[str] = []
    refused: list[str] = []
    unknown: list[str] = []
    for call, content in view.results:
        if call.get("name") != "send_notice":
            continue
        who = str(_args(call).get("customer", "?"))
        value = _json(content)
        state = value.get("status") if isinstance(value, dict) else None
        (sent if state == "success" else refused if state == "error" else unknown).append(who)
    sent, refused, unknown = (list(dict.fromkeys(names)) for names in (sent, refused, unknown))
    lines = [f"共找到 {len(orders)} 笔{status}订单，涉及 {len(customers)} 位客户，订单总金额 {sum(orders.values())}。",
             f"已给 {len(sent)} 位客户发送通知。"]
    if refused:
        lines.append(f"没有发送的 {len(refused)} 位：{'、'.join(refused)}（写操作被拒绝或失败，未重试）。")
    if unknown:
        lines.append(f"另有 {len(unknown)} 位的发送回执已从对话中清除，无法确认是否发出：{'、'.join(unknown)}。")
    return lines


def _lookup_answer(question: str, status: str, notes: list) -> list[str]:
    customers, orders = _by_customer(notes), _orders(notes)
    named = _named_customers(question)
    if named:
        lines = []
        for name in named:
            mine = customers.get(name, [])
            listed = "、".join(f"{o}（金额 {amount}）" for o, amount in mine)
            lines.append(f"{name} 有 {len(mine)} 笔{status}订单：{listed}，合计 {sum(a for _, a in mine)}。" if mine
                         else f"{status}订单里没有 {name} 的订单。")
        return lines + [f"（查遍了全部 {len(orders)} 笔{status}订单。）"]
    return [f"{status}订单共 {len(orders)} 笔，涉及 {len(customers)} 位客户，总金额 {sum(a for _, a in orders)}。",
            f"订单号：{'、'.join(o for o, _ in orders)}。"]


def longrun_reply(view: View, tools: list[OfferedTool]) -> Turn | None:
    """The next step over paged orders, or None when this is not such a question (the honest model answers)."""
    offered = {t.name for t in tools}
    if not {"query_orders", "read_more"} <= offered:
        return None
    status = next((s for s in STATUSES if s in view.question), None)
    if status is None:  # about orders, yet no status to query by: ask, rather than reach for another tool
        return Turn(text=TAG + f"要查订单，需要知道订单状态（{'、'.join(STATUSES)}之一），问题里没有找到。"
                             "请说明要查哪种状态的订单。") if "订单" in view.question else None
    notify = "send_notice" in offered and any(w in view.question for w in ("通知", "提醒"))
    first_only = not notify and not _named_customers(view.question) and any(
        w in view.question for w in ("第一笔", "最早"))
    city = next((c for c in CITIES if c in view.question), None)
    query = [(call, content) for call, content in view.results if call.get("name") == "query_orders"]
    if not query:
        return Turn(tool="query_orders", arguments=json.dumps({"status": status, **({"city": city} if city else {})},
                                                               ensure_ascii=False))
    handle = _HANDLE.search(query[0][1])
    notes = _notes(view)
    note_text, failed = None, None
    last_call, last_content = view.results[-1]
    if last_call.get("name") == "read_more":
        page = _json(last_content)
        data = page.get("result") if isinstance(page, dict) else None
        if isinstance(data, dict) and "text" in data and not any(o == data.get("offset") for _, o, _, _ in notes):
            records = _page_records(str(data["text"]))
            note_text = _note(len(notes) + 1, int(data.get("offset") or 0), records, data.get("next_offset"))
            notes = notes + _notes(View(view.question, [{"role": "assistant", "content": note_text}]))
        elif not (isinstance(page, dict) and page.get("status") == "success"):
            error = page.get("error") if isinstance(page, dict) else None
            failed = str(error or "结果无法读取")[:200]
    elif handle is None and not notes:  # the whole result fitted: one page, noted from the query's own result
        result = _json(query[0][1])
        whole = result.get("result") if isinstance(result, dict) else None
        if isinstance(whole, list):
            note_text = _note(1, 0, [r for r in whole if isinstance(r, dict) and "customer" in r], None)
            notes = _notes(View(view.question, [{"role": "assistant", "content": note_text}]))

    def say(lines: list[str]) -> Turn:
        if failed is not None:
            lines = lines + [f"注意：续读失败（{failed}），以上只覆盖已读到的 {len(notes)} 段。"]
        text = TAG + "\n".join(lines)
        return Turn(text=text if note_text is None else note_text + "\n" + text)

    if first_only:
        row = _first_row(query[0][1])
        if row is not None:
            return say([f"{status}的第一笔订单是 {row['order_id']}（{row.get('date', '日期未知')}，"
                        f"{row.get('city', '城市未知')}），{row['customer']}，金额 {row.get('amount', '未知')}。"])
        first = next(((name, items[0]) for name, items in notes[0][2].items() if items), None) if notes else None
        if first is not None:
            return say([f"{status}的第一笔订单是 {first[1][0]}，{first[0]}，金额 {first[1][1]}。"])
    more = failed is None and (not notes or notes[-1][3] is not None)
    if handle is not None and more and (not first_only or not notes):
        return Turn(text=note_text, tool="read_more",
                    arguments=json.dumps({"result_id": int(handle.group(1)), "offset": notes[-1][3] if notes else 0}))
    if notify:
        written = {str(_args(call).get("customer")) for call in view.calls.values()
                   if call.get("name") == "send_notice"}
        named = _named_customers(view.question)
        for name, orders in _by_customer(notes).items():
            # one notice per customer, about all of their orders on every page
            if name not in written and (not named or name in named):
                tool, arguments = _notice_call(name, orders)
                return Turn(text=note_text, tool=tool, arguments=arguments)
        return say(_notices_answer(view, status, notes))
    return say(_lookup_answer(view.question, status, notes))
