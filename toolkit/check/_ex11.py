"""Exercise 11: approve_by_rules(pending, rules) — chapter 11's approve, one step further: the rules are a table
of (tool, argument, limit) handed in, a write within every rule of its tool is approved, anything else is denied
with a reason the model reads (a tool without a rule, a value over a limit or one that cannot be compared)."""
from __future__ import annotations

from typing import Any

from ..approval import PendingCall
from ._core import Check, Exercise, Fail
from ._plain import describe

RULES = (("send_notice", "order_ids", 1), ("refund_order", "amount", 500),
         ("issue_coupon", "amount", 50), ("issue_coupon", "count", 100))
TOOLS = ("transfer_money", "grant_points", "delete_files", "raise_limit", "book_room")  # for the random tables
ARGUMENTS = ("amount", "points", "files", "limit", "nights")


def pending(tool: str, arguments: Any) -> PendingCall:
    return PendingCall("call_check", tool, arguments, "")


def shown(call: PendingCall) -> str:
    return f"{call.tool}({call.arguments})"


def expect_approved(play: Any, call: PendingCall, rules: Any = RULES) -> None:
    out = play(call, rules)
    if out is not True:
        raise Fail(f"{shown(call)} 在它的每条规则之内（等于上限也算），应批准（返回 True），得到 {describe(out)}")


def expect_denied(play: Any, call: PendingCall, why: str, rules: Any = RULES) -> str:
    out = play(call, rules)
    if out is True:
        raise Fail(f"{shown(call)}：{why}，应拒绝，却批准了（返回 True）")
    if not isinstance(out, str) or not out.strip():
        raise Fail(f"{shown(call)}：{why}；拒绝时返回一句理由（str），模型读到它才能向用户说明，得到 {describe(out)}")
    return out


def denies_meaningfully(play: Any) -> None:
    """A point for a denial only when a plain write within its rule is approved: denying everything earns none."""
    out = play(pending("refund_order", {"order_id": "SO-2026-0010", "amount": 120}), RULES)
    if out is not True:
        raise Fail(f"先要批准规则之内的调用（refund_order 金额 120，上限 500），得到 {describe(out)}：一律拒绝不算审批")


def check_within_limits(play: Any) -> None:
    for arguments in ({"order_id": "SO-2026-0010", "amount": 500}, {"order_id": "SO-2026-0028", "amount": 88.5}):
        expect_approved(play, pending("refund_order", arguments))
    expect_approved(play, pending("issue_coupon", {"customer": "客户042", "amount": 50, "count": 100}))


def check_over_limit(play: Any) -> None:
    denies_meaningfully(play)
    expect_denied(play, pending("refund_order", {"order_id": "SO-2026-0010", "amount": 873}), "金额 873 超过上限 500")


def check_reason_names_rule(play: Any) -> None:
    reason = expect_denied(play, pending("refund_order", {"order_id": "SO-2026-0010", "amount": 873}),
                           "金额 873 超过上限 500")
    missing = [part for part in ("amount", "500", "873") if part not in reason]
    if missing:
        raise Fail(f"理由要说出违反了哪条规则（参数 amount、上限 500）和这次的值 873，缺了 {'、'.join(missing)}："
                   f"得到 {reason!r}")


def check_list_counts_items(play: Any) -> None:
    expect_approved(play, pending("send_notice", {"customer": "客户042", "order_ids": ["SO-2026-0010"],
                                                  "message": "您好，您的订单SO-2026-0010已付款成功。"}))
    ids = ["SO-2026-0028", "SO-2026-0166", "SO-2026-0171"]
    expect_denied(play, pending("send_notice", {"customer": "客户003", "order_ids": ids,
                                                "message": f"您好，您的订单{'、'.join(ids)}已付款成功。"}),
                  "order_ids 有 3 个，上限是 1 个（列表按个数算）")


def check_every_rule(play: Any) -> None:
    expect_denied(play, pending("issue_coupon", {"customer": "客户042", "amount": 30, "count": 240}),
                  "count 240 超过上限 100（amount 30 在上限之内，但每条规则都要满足）")
    expect_denied(play, pending("issue_coupon", {"customer": "客户042", "amount": 80, "count": 10}),
                  "amount 80 超过上限 50（count 10 在上限之内，但每条规则都要满足）")


def check_unknown_tool(play: Any) -> None:
    denies_meaningfully(play)
    expect_denied(play, pending("cancel_order", {"order_id": "SO-2026-0010"}), "规则表里没有 cancel_order")


def check_bad_values(play: Any) -> None:
    denies_meaningfully(play)
    for arguments, why in (({"order_id": "SO-2026-0010"}, "模型没给 amount"),
                           ({"order_id": "SO-2026-0010", "amount": "八百"}, "amount 是文字，没法和上限比"),
                           ({"order_id": "SO-2026-0010", "amount": None}, "amount 是 None"),
                           ('{"order_id": "SO-2026-0010", "amount": 80', "参数不是合法 JSON（arguments 是原始字符串）")):
        expect_denied(play, pending("refund_order", arguments), why)


def check_rules_from_argument(play: Any) -> None:
    for _ in range(4):
        tools = play.rng.sample(TOOLS, 3)
        rules = [(tool, play.rng.choice(ARGUMENTS), play.rng.randint(10, 9000)) for tool in tools[:2]]
        for tool, argument, limit in rules:
            expect_approved(play, pending(tool, {argument: limit - play.rng.randint(1, 9)}), rules)
            expect_denied(play, pending(tool, {argument: limit + play.rng.randint(1, 9)}),
                          f"规则表 {rules} 里 {argument} 的上限是 {limit}", rules)
        expect_denied(play, pending(tools[2], {"amount": 1}), f"规则表 {rules} 里没有 {tools[2]}", rules)
        expect_denied(play, pending("refund_order", {"amount": 1}), f"这次的规则表 {rules} 里没有 refund_order", rules)


EXERCISE = Exercise("11", "11_approval_mcp", "按规则表审批写操作：限额之内批准，其余拒绝并说出是哪条规则",
                    "approve_by_rules", (
    Check("within_limits", "每条规则都满足（等于上限也算）→ 批准（True）",
          "规则是「不超过」上限：用 <=，不是 <", check_within_limits),
    Check("over_limit_denied", "超过上限 → 拒绝，并返回一句理由（str）", "超过上限时 return 一段文字，不是 False",
          check_over_limit),
    Check("reason_names_rule", "理由说出是哪条规则：参数名、上限和这次的值", "例如 f\"{argument} 是 {value}，超过上限 {limit}\"",
          check_reason_names_rule),
    Check("list_counts_items", "参数是列表时按个数和上限比（order_ids 最多 1 个）", "列表用 len(value) 和上限比",
          check_list_counts_items),
    Check("every_rule", "同一个工具的每条规则都要满足，不只第一条或最后一条", "先逐条检查，全部通过之后才 return True；"
          "不要把规则表变成 {工具: 规则} 的字典（同一个工具的规则会互相覆盖）", check_every_rule),
    Check("unknown_tool_denied", "规则表里没有的工具 → 拒绝（没有规则就不自动批准）", "先找出这个工具的规则；一条也没有就拒绝",
          check_unknown_tool),
    Check("bad_value_denied", "参数缺了、不是数字或列表、整个参数不是 dict → 拒绝，不抛异常",
          "先看 isinstance(pending.arguments, dict)，再看值是不是 int / float / list；不要用 .get(参数, 0)",
          check_bad_values),
    Check("rules_from_argument", "按传进来的 rules 审批（随机的规则表）", "不要写死工具名和上限，也不要用全局的 RULES：只读参数 rules",
          check_rules_from_argument),
))
