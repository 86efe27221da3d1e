"""Chapter 06's own checks: the student's executor class (MyExecutor), step by step.

The chapter builds it on the student's own pieces (chapter 03's retry, chapters 01 and 02's parse and truncate),
so these checks judge the executor with the pieces it was built with: retry (step 1): only failures that heal
are retried, a sync tool runs once, max_retries counts retries, waits are jittered on the simulated clock, an
error envelope returned by a tool is a failure (retried only when it says so). Budget (step 2): `data` is a JSON
value within result_max_chars, a long list stays a list of whole records, the full output is kept in `artifact`.
Records (step 3): `call_history` keeps each call up to `history_limit`, `get_summary()` counts all calls.
The original course's executor passes two of them (a transient failure is retried; each call is recorded).
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ._core import Check, Exercise, Fail, no_real_sleep, play, probe, simulate, tool_awaited
from ._plain import describe
from ._tools import Scripted, ScriptedSync

_MISSING = "<没有这个属性>"


@lru_cache(maxsize=1)
def orders() -> list[dict]:
    """The course's 200 orders (data/orders.json): the long list result."""
    from ..tools import data_dir

    return json.loads((data_dir() / "orders.json").read_text(encoding="utf-8"))["orders"]


def _said(value: Any) -> str:
    """A value for a reason: None as None (describe() adds a hint about a forgotten return)."""
    return "None" if value is None else describe(value)


async def _field(obj: Any, name: str) -> Any:
    return await play(getattr, obj, name, _MISSING)


@probe
def executor_run(cls: Any, *, init: dict, calls: list, fresh: bool = False, records: bool = False) -> dict:
    """Probe: ex = cls(**init) (a new one per call with `fresh`), then `await ex.execute(tool, name)` per call.

    A call is {"plan": [...], "sync": bool, "result": value or "orders", "name": str}: a scripted tool
    (toolkit.check._tools). Returns per call the tool's record, the waits it caused and the result's
    fields; with `records`, the names in `call_history` and `get_summary()`.
    """
    async def go(clock: Any) -> dict:
        ex = await play(cls, **init)
        outs = []
        for n, spec in enumerate(calls):
            if fresh and n:
                ex = await play(cls, **init)
            result = orders() if spec.get("result") == "orders" else spec.get("result", "结果")
            tool = (ScriptedSync if spec.get("sync") else Scripted)(spec["plan"], result=result,
                                                                    name=spec.get("name", "search"))
            waited = len(clock.sleeps)
            execute = await play(getattr, ex, "execute")
            r = await play(execute, tool, spec.get("name", "search"))
            outs.append({**tool.record(), "waits": clock.sleeps[waited:],
                         **{k: await _field(r, k) for k in ("data", "error", "attempts", "truncated", "artifact")}})
        out: dict = {"outs": outs}
        if records:
            history = await _field(ex, "call_history")
            out["history"] = _MISSING if history == _MISSING else [await _field(r, "name") for r in history]
            summary = await _field(ex, "get_summary")
            out["summary"] = _MISSING if summary == _MISSING else await play(summary)
        return out

    record, _ = simulate(go)
    return record


def _one(play_: Any, spec: dict, **init: Any) -> dict:
    [out] = play_.run("executor_run", init=init, calls=[spec])["outs"]
    tool_awaited(out)
    return out


def check_fatal(p: Any) -> None:
    out = _one(p, {"plan": ["permission"], "name": "read_finance"}, max_retries=3)
    if out["calls"] != 1:
        raise Fail(f"PermissionError 重试多少次都一样：工具应只调用 1 次，实际 {out['calls']} 次，"
                   f"白等了 {sum(out['waits']):g} 秒")
    if out["error"] in (None, _MISSING):
        raise Fail(f"权限错误应是一条错误结果（error 写明原因），得到 error={_said(out['error'])}")


def check_sync(p: Any) -> None:
    out = _one(p, {"plan": ["ok"], "sync": True, "result": {"total_sales": 9692}, "name": "analyze_sales_csv"})
    if out["calls"] != 1 or out["error"] is not None:
        raise Fail(f"同步工具（普通函数）第一次就成功了，应只执行 1 次、没有错误；实际执行 {out['calls']} 次，"
                   f"error={_said(out['error'])}。普通函数的返回值不能 await：先看 inspect.isawaitable(value)")


def check_transient(p: Any) -> None:
    out = _one(p, {"plan": ["timeout", "timeout", "ok"]}, max_retries=3)
    if out["calls"] != 3 or out["error"] is not None:
        raise Fail(f"超时会自己好：两次超时之后第三次成功，应调用 3 次、没有错误；实际 {out['calls']} 次，"
                   f"error={_said(out['error'])}")
    if not out["waits"]:
        raise Fail("重试之前没有在模拟时钟上等待：用 await get_clock().sleep(秒数)")
    no_real_sleep(p)


def check_max_retries(p: Any) -> None:
    out = _one(p, {"plan": ["timeout"]}, max_retries=2)
    if out["calls"] != 3:
        raise Fail(f"max_retries=2 是第一次之后再试 2 次，共 3 次；工具被调用了 {out['calls']} 次")


def check_jitter(p: Any) -> None:
    runs = p.run("executor_run", init={"max_retries": 3}, fresh=True,
                 calls=[{"plan": ["timeout", "timeout", "ok"]} for _ in range(5)])["outs"]
    first = [run["waits"][0] if run["waits"] else None for run in runs]
    if None in first:
        raise Fail("重试之前没有在模拟时钟上等待：用 await get_clock().sleep(秒数)")
    if len(set(first)) == 1:
        raise Fail(f"五个客户端第一次重试前都等了 {first[0]:g} 秒：它们会在同一时刻一起砸回服务上（惊群）。"
                   "等待时间要带随机抖动，例如 get_clock().random.uniform(0, 上限)")


NOT_FOUND = {"status": "error", "error": {"code": "FILE_NOT_FOUND", "message": "找不到文件 sales_2027.csv"}}
BUSY = {"status": "error", "error": {"code": "UNAVAILABLE", "message": "服务暂时不可用"}, "retryable": True}


def check_envelope(p: Any) -> None:
    out = _one(p, {"plan": [NOT_FOUND, "ok"], "name": "analyze_sales_csv"}, max_retries=3)
    if out["error"] in (None, _MISSING) or out["calls"] != 1:
        raise Fail(f"工具返回了错误信封（status 为 error，代码 FILE_NOT_FOUND）：这是一次失败，不可重试，应只调用 1 次"
                   f"并返回错误结果；实际调用 {out['calls']} 次，error={_said(out['error'])}")
    out = _one(p, {"plan": [BUSY, "ok"], "name": "analyze_sales_csv"}, max_retries=3)
    if out["calls"] != 2 or out["error"] is not None:
        raise Fail(f"错误信封写明 \"retryable\": true 时照常重试：应调用 2 次后成功，实际 {out['calls']} 次，"
                   f"error={_said(out['error'])}")


def _long(p: Any, max_chars: int = 2000) -> dict:
    return _one(p, {"plan": ["ok"], "result": "orders", "name": "search_orders"}, result_max_chars=max_chars)


def check_budget(p: Any) -> None:
    for max_chars in (2000, 800):
        data = _long(p, max_chars)["data"]
        try:
            size = len(json.dumps(data, ensure_ascii=False))
        except (TypeError, ValueError):
            raise Fail(f"data 应是能 json.dumps 的值，得到 {describe(data)}") from None
        if size > max_chars:
            raise Fail(f"200 条订单，result_max_chars={max_chars}：data 的 JSON 有 {size} 个字符，超出预算"
                       + ("（截断后的字符串再加一行说明，也超出了）" if isinstance(data, str) else ""))


def check_list(p: Any) -> None:
    data = _long(p)["data"]
    if not isinstance(data, list):
        raise Fail(f"工具返回的是列表，预算内的 data 也应是列表（记录完整，最后说明省略了多少），得到 {describe(data)}"
                   "：把 str(列表) 切一刀，下游既不能 json.loads，也分不清哪条记录被切断了")
    whole = orders()
    broken = [item for item in data if isinstance(item, dict) and item not in whole]
    if broken or not any(item in whole for item in data):
        raise Fail(f"列表里的记录应是原样完整的订单，得到 {describe(broken[:1] or data[:1])}")
    short = _one(p, {"plan": ["ok"], "result": whole[:3]}, result_max_chars=2000)["data"]
    if short != whole[:3]:
        raise Fail(f"没超预算的结果应原样交出，得到 {describe(short)}")


def check_artifact(p: Any) -> None:
    out = _long(p)
    if out["artifact"] != orders():
        raise Fail(f"完整的 200 条订单应留在 result.artifact（给程序用，不进模型上下文），得到 {_said(out['artifact'])}")
    if out["truncated"] is not True:
        raise Fail(f"data 被缩短了，result.truncated 应为 True，得到 {_said(out['truncated'])}")
    short = _one(p, {"plan": ["ok"], "result": orders()[:3]}, result_max_chars=2000)
    if short["truncated"] is not False:
        raise Fail(f"没超预算时 result.truncated 应为 False，得到 {_said(short['truncated'])}")


NAMES = ["get_weather", "search_orders", "analyze_sales_csv", "read_finance", "get_weather", "search_orders",
         "get_weather", "analyze_sales_csv"]
PLANS = [["ok"], ["timeout", "ok"], ["ok"], ["permission"], ["ok"], ["timeout", "timeout", "ok"], ["ok"], ["ok"]]


def _records(p: Any, **init: Any) -> dict:
    seen = p.run("executor_run", init=init, records=True,
                 calls=[{"plan": plan, "name": name} for name, plan in zip(NAMES, PLANS)])
    if seen["history"] == _MISSING:
        raise Fail("执行器没有 call_history 属性：每次调用的结果都要记下来")
    return seen


def check_history(p: Any) -> None:
    seen = _records(p)
    if seen["history"] != NAMES:
        raise Fail(f"调用了 {len(NAMES)} 次，call_history 应按顺序记下每一次，得到 {describe(seen['history'])}")


def check_bounded(p: Any) -> None:
    seen = _records(p, history_limit=5)
    if seen["history"] != NAMES[-5:]:
        raise Fail(f"history_limit=5 时调用 {len(NAMES)} 次，call_history 应只留最近 5 次（旧的自动丢弃），"
                   f"得到 {len(seen['history'])} 条：{describe(seen['history'])}。collections.deque(maxlen=…) 正好做这件事")


def check_summary(p: Any) -> None:
    seen = _records(p, history_limit=5)
    summary = seen["summary"]
    if not isinstance(summary, dict):
        raise Fail(f"get_summary() 应返回 dict，得到 {describe(summary)}")
    want = {"total_calls": 8, "success_rate": 7 / 8, "retries": 3}
    wrong = {k: summary.get(k, _MISSING) for k, v in want.items()
             if not isinstance(summary.get(k), (int, float)) or abs(summary[k] - v) > 1e-9}
    if wrong:
        raise Fail(f"8 次调用（1 次权限错误，另外 3 次重试），history_limit=5：get_summary() 应给 {want}，"
                   f"不对的是 {wrong}。统计要覆盖全部调用，不能只数 call_history 里剩下的")


EXERCISE = Exercise("ch06", "06_executor", "自己的执行器 MyExecutor", "MyExecutor", (
    Check("fatal_not_retried", "PermissionError 不重试（原课程的 bug 1）",
          "重试交给第 03 章的 retry：它只重试 classify_error(exc).retryable 的错误",
          check_fatal),
    Check("sync_tool_runs_once", "同步工具只执行一次（原课程 await 一个普通函数的返回值）",
          "value = tool_fn(...)；只有 inspect.isawaitable(value) 时才 await", check_sync),
    Check("transient_retried", "超时照常重试，在模拟时钟上等待", "await get_clock().sleep(秒数)", check_transient),
    Check("max_retries_are_retries", "max_retries 是重试次数：max_retries=2 共调用 3 次",
          "max_retries 原样交给你的 retry：第一次之后最多再试 max_retries 次", check_max_retries),
    Check("waits_jittered", "等待带随机抖动：五个客户端不在同一时刻重试（原课程的 bug 2）",
          "重试交给第 03 章的 retry：它在 get_clock().random.uniform(0, 上限) 秒之间随机等待", check_jitter),
    Check("error_envelope_is_an_error", "返回值里的错误信封是失败（写明 retryable 时才重试）",
          "error_from_envelope(value) 认出 {\"status\": \"error\", …}，把它变成异常交给 retry", check_envelope),
    Check("data_within_budget", "data 是 JSON 值，长度不超过 result_max_chars",
          "文字交给第 02 章的 smart_truncate，其余的值交给第 01 章的 parse_as_data",
          check_budget),
    Check("long_list_stays_a_list", "长列表缩短后仍是列表，记录完整（原课程的 bug 3）",
          "第 01 章的 parse_as_data 保留完整记录，并在最后说明还有多少项", check_list),
    Check("full_output_kept", "完整输出留在 artifact，truncated 说明有没有缩短",
          "dataclasses.replace(result, data=…, truncated=…, artifact=原值)", check_artifact),
    Check("history_records_each_call", "call_history 按顺序记下每次调用", "在 _finish 里 append", check_history),
    Check("history_bounded", "call_history 最多 history_limit 条，旧的自动丢弃", "collections.deque(maxlen=history_limit)",
          check_bounded),
    Check("summary_counts_all_calls", "get_summary() 的统计覆盖全部调用（不只 call_history 里剩下的）",
          "另外用计数器累计：调用数、成功数、重试数、耗时", check_summary),
), probes=(executor_run,))
