"""Chapter 11's own checks: the student's approve(pending) for run_agent(approve=...), True to run a write or a
reason (a str the model reads) to deny it. The chapter's rules: only payment confirmations go out, and a notice
names every order it is about; everything else is denied with a reason."""
from __future__ import annotations

from typing import Any

from ..approval import PendingCall
from ._core import Check, Exercise, Fail
from ._plain import describe

GOOD = ({"customer": "客户042", "order_ids": ["SO-2026-0010"],
         "message": "您好，您的订单SO-2026-0010已付款成功，我们会尽快安排发货。"},
        {"customer": "客户003", "order_ids": ["SO-2026-0028", "SO-2026-0166"],
         "message": "您好，您的订单SO-2026-0028、SO-2026-0166已付款成功。"})
PROMO = {"customer": "客户042", "order_ids": ["SO-2026-0010"], "message": "限时促销：全场八折，今晚截止！"}
ONE_NAMED = {"customer": "客户003", "order_ids": ["SO-2026-0028", "SO-2026-0166"],
             "message": "您好，您的订单SO-2026-0028已付款成功。"}


def pending(tool: str, arguments: dict) -> PendingCall:
    return PendingCall("call_check", tool, arguments, "")


def expect_denied(play: Any, call: PendingCall, what: str) -> str:
    out = play(call)
    if out is True:
        raise Fail(f"{what}：应拒绝，却批准了（返回 True）")
    if not isinstance(out, str) or not out.strip():
        raise Fail(f"{what}：拒绝时返回一句理由（str），模型读到它才能向用户说明；得到 {describe(out)}")
    return out


def check_payment_approved(play: Any) -> None:
    for arguments in GOOD:
        out = play(pending("send_notice", arguments))
        if out is not True:
            raise Fail(f"付款确认通知（{arguments['message']}）应批准（返回 True），得到 {describe(out)}")


def check_other_notice_denied(play: Any) -> None:
    expect_denied(play, pending("send_notice", PROMO), "不是付款确认的通知（促销）")


def check_other_tool_denied(play: Any) -> None:
    expect_denied(play, pending("cancel_order", {"order_id": "SO-2026-0010", "message": "付款成功"}),
                  "别的写操作（cancel_order）")


def check_orders_named(play: Any) -> None:
    reason = expect_denied(play, pending("send_notice", ONE_NAMED), "通知没提到 order_ids 里的 SO-2026-0166")
    if "SO-2026-0166" not in reason:
        raise Fail(f"理由要说出没提到的订单 SO-2026-0166，模型才知道改哪里；得到 {reason!r}")


EXERCISE = Exercise("ch11", "11_approval_mcp", "写操作的审批函数：只放行付款确认，拒绝时说明理由", "approve", (
    Check("payment_approved", "付款确认通知（message 里有“付款成功”、提到每个订单）→ 批准（True）",
          "最后 return True", check_payment_approved),
    Check("other_notice_denied", "别的通知（促销）→ 拒绝，并返回一句理由", "看 pending.arguments['message'] 里有没有“付款成功”",
          check_other_notice_denied),
    Check("other_tool_denied", "别的写操作 → 拒绝，并返回一句理由", "先看 pending.tool 是不是 send_notice",
          check_other_tool_denied),
    Check("orders_named", "通知没提到 order_ids 里的某个订单 → 拒绝，理由说出是哪个",
          "逐个看 order_ids 里的订单号在不在 message 里", check_orders_named),
))
