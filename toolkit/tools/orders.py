"""The long run's tools (chapter 10): orders to look through page by page, and a notice that needs approval.

query_orders lists the 200 teaching orders of data/input/query_orders_200.json by status (and city); its
result is far over a model's budget, so the executor cuts it and the model pages through the kept full output
with read_more (bound to the executor: `read_more_tool(executor)`). send_notice is a write: it changes
something (an outbox), so it is registered with writes=True and needs_approval=True. `orders_registry()`
offers the three with Chinese descriptions and explicit schemas.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from ..registry import ToolRegistry
from ._files import DataDir, envelope, error_envelope, find_input

__all__ = ["ORDER_STATUSES", "Outbox", "orders_registry", "query_orders", "read_more_tool", "register_send_notice"]

ORDERS_FILE = "query_orders_200.json"
ORDER_STATUSES = ("已支付", "已发货", "已完成", "已退款")
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都")


def query_orders(status: str, city: str | None = None, *, data_dir: DataDir = None) -> dict:
    """Every teaching order with `status` (and `city`), oldest first, as {status, data: [orders], source}."""
    if status not in ORDER_STATUSES:
        return error_envelope("INVALID_ARGUMENTS", f"status 应是 {'、'.join(ORDER_STATUSES)} 之一，收到 {status!r}")
    where = find_input(ORDERS_FILE, data_dir)
    if isinstance(where, dict):  # find_input's error envelope
        return where
    real, logical = where
    orders = json.loads(real.read_text(encoding="utf-8"))
    found = [o for o in orders if o["status"] == status and (city is None or o["city"] == city)]
    return envelope(found, [logical])


@dataclass
class Outbox:
    """Where send_notice writes: the notices sent, in order (a stand-in for a message service)."""

    sent: list[dict] = field(default_factory=list)

    def send_notice(self, customer: str, message: str, order_ids: list[str]) -> dict:
        """Send `message` about `order_ids` to `customer`; returns the notice's id."""
        if not customer or not message or not order_ids:
            return error_envelope("INVALID_ARGUMENTS", "customer、message、order_ids 都不能为空")
        notice = {"notice_id": f"N-{len(self.sent) + 1:03d}", "customer": customer, "order_ids": list(order_ids),
                  "message": message}
        self.sent.append(notice)
        return envelope({"notice_id": notice["notice_id"], "customer": customer, "orders": len(order_ids)},
                        ["outbox"])


def read_more_tool(executor: Any, page_chars: int | None = None) -> Callable[..., dict]:
    """A read_more(result_id, offset) tool over `executor`'s kept full outputs, `page_chars` at a time
    (default: half the executor's result budget, so a page and its JSON escaping fit the budget whole)."""
    size = page_chars or max(executor.result_max_chars // 2, 100)

    def read_more(result_id: int, offset: int = 0) -> dict:
        return executor.read_artifact(result_id, offset, size)
    return read_more


_INT = {"type": "integer", "minimum": 0}


def orders_registry(executor: Any, outbox: Outbox | None = None, *, data_dir: DataDir = None) -> ToolRegistry:
    """A new registry with query_orders, read_more (over `executor`) and send_notice (into `outbox`)."""
    outbox = outbox if outbox is not None else Outbox()
    registry = ToolRegistry()
    registry.register(lambda status, city=None: query_orders(status, city, data_dir=data_dir), name="query_orders",
                      description="按状态（可选城市）查询 2026 年 4 月的教学订单，返回全部匹配的订单；结果很长时会被截断，"
                                  "用 read_more 逐段读取完整结果",
                      parameters={"type": "object", "properties": {
                          "status": {"type": "string", "enum": list(ORDER_STATUSES)},
                          "city": {"type": "string", "enum": list(CITIES)}},
                          "required": ["status"], "additionalProperties": False}, kind="query")
    registry.register(read_more_tool(executor), name="read_more",
                      description="读取一个被截断的工具结果的下一段：result_id 是结果里 more.result_id，offset 从 0 开始，"
                                  "之后用上一段返回的 next_offset；next_offset 为 null 表示读完了",
                      parameters={"type": "object", "properties": {"result_id": {"type": "integer", "minimum": 1},
                                                                   "offset": _INT},
                                  "required": ["result_id"], "additionalProperties": False})
    register_send_notice(registry, outbox)
    return registry


def register_send_notice(registry: ToolRegistry, outbox: Outbox) -> ToolRegistry:
    """Add send_notice (into `outbox`) to `registry`: a write that needs approval. Returns the registry."""
    registry.register(outbox.send_notice, name="send_notice",
                      description="给一位客户发送通知（写操作：会真的发出去，需要人工批准）",
                      parameters={"type": "object", "properties": {
                          "customer": {"type": "string", "minLength": 1},
                          "message": {"type": "string", "minLength": 1, "maxLength": 200},
                          "order_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
                          "required": ["customer", "message", "order_ids"], "additionalProperties": False},
                      writes=True, needs_approval=True)
    return registry
