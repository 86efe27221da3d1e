"""Chapter 11's own checks judge each approve the chapter writes as the chapter says they do, and the mistakes a
student makes in its two steps."""
from __future__ import annotations

import json
from pathlib import Path

from toolkit.check import run_checks

CHAPTER = Path(__file__).resolve().parent.parent / "notebooks" / "11_approval_mcp.ipynb"


def versions() -> list:
    """Each approve the chapter writes in its own cells (the your-turn cells left out), in order, checks left out."""
    found = []
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("def approve(") and \
                "your-turn" not in cell["metadata"].get("tags", []):
            namespace: dict = {}
            exec(compile(source.split("\n\n\ncheck(")[0], CHAPTER.name, "exec"), namespace)
            found.append(namespace["approve"])
    return found


def test_the_first_step_passes_its_checks_and_misses_only_the_unnamed_order():
    first, final = versions()
    assert set(run_checks(first, "ch11").failed_ids()) == {"orders_named"}
    assert run_checks(final, "ch11").ok


def test_approving_everything_passes_only_the_payment_notice():
    assert run_checks(lambda pending: True, "ch11").failed_ids() == ["other_notice_denied", "other_tool_denied",
                                                                    "orders_named"]


def test_denying_with_false_instead_of_a_reason_is_caught():
    def approve(pending):
        if pending.tool != "send_notice" or "付款成功" not in pending.arguments.get("message", ""):
            return False
        return all(o in pending.arguments["message"] for o in pending.arguments.get("order_ids", []))

    result = run_checks(approve, "ch11")
    assert result.failed_ids() == ["other_notice_denied", "other_tool_denied", "orders_named"]
    assert all("理由" in r.reason for r in result.results if not r.passed)


def test_a_reason_that_does_not_name_the_missing_order_is_caught():
    def approve(pending):
        if pending.tool != "send_notice" or "付款成功" not in pending.arguments.get("message", ""):
            return "只允许发送付款确认通知"
        if any(o not in pending.arguments["message"] for o in pending.arguments.get("order_ids", [])):
            return "通知漏了订单"
        return True

    result = run_checks(approve, "ch11")
    assert result.failed_ids() == ["orders_named"]
    assert "SO-2026-0166" in next(r.reason for r in result.results if r.id == "orders_named")


def test_checking_only_the_tool_name_lets_the_promotion_through():
    def approve(pending):
        return True if pending.tool == "send_notice" else "只允许 send_notice"

    assert run_checks(approve, "ch11").failed_ids() == ["other_notice_denied", "orders_named"]


def test_a_rule_written_another_way_passes():
    def approve(pending):
        args = pending.arguments if isinstance(pending.arguments, dict) else {}
        text = str(args.get("message", ""))
        if pending.tool == "send_notice" and "付款成功" in text:
            left = [o for o in args.get("order_ids") or [] if o not in text]
            return True if not left else "这些订单没写进通知：" + "，".join(left)
        return f"{pending.tool} 不在允许的写操作之内"

    assert run_checks(approve, "ch11").ok
