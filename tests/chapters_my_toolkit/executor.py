# 我的工具包：executor（接在 run_agent(executor=…)）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

def make_result(name, value, error, failures, ms):
    """retry 交回的 (结果, 错误说明) → ToolResult：失败是一条错误结果；成功时打开信封，模型只读 data。"""
    if error is not None:                     # 说明来自你的 retry，种类和错误码来自最后一次失败
        info = failures[-1]
        return ToolResult(name, None, error, ms, info.error_type, len(failures), info.error_code)
    data, source, _ = unwrap_envelope(value)  # 成功的信封：模型只读 data（第 01 章）
    return ToolResult(name, data, None, ms, attempts=len(failures), source=source)


def fit_to_budget(data, limit, parse, truncate):
    """预算：文字超过 limit 交给你的 truncate，其余的值交给你的 parse（JSON 仍是 JSON）。"""
    if isinstance(data, str):
        return truncate(data, limit) if len(data) > limit else data  # 第 02 章
    return parse(data, limit)


import inspect

from toolkit import (FatalToolError, RetryableToolError, ToolResult, classify_error, error_from_envelope,
                     get_clock)

from toolkit.mine import pieces

from toolkit.results import unwrap_envelope

my = pieces("parse", "truncate", "retry")

class RetryExecutor:
    """第 1 步：重试交给你的 retry；执行器记下每次尝试，并把错误信封变成异常交给它。"""

    def __init__(self, max_retries=3, result_max_chars=2000, retry=my.retry):
        self.max_retries = max_retries            # 第一次之后最多再试几次：原样交给你的 retry
        self.result_max_chars = result_max_chars
        self.retry = retry

    async def execute(self, tool_fn, name, *args, **kwargs):
        clock = get_clock()
        start, failures = clock.now(), []         # 每次尝试记一项：失败记 ErrorInfo，成功记 None

        async def attempt(*a, **kw):              # 你的 retry 调用的是它，它再调用工具
            try:
                value = tool_fn(*a, **kw)
                if inspect.isawaitable(value):    # 只有异步工具才 await
                    value = await value
                info = error_from_envelope(value) # 第 01 章：工具在返回值里报告的失败
                if info is not None:              # 变成异常，你的 retry 才看得见
                    raise (RetryableToolError if info.retryable else FatalToolError)(info.message, error_code=info.error_code)
            except Exception as exc:
                failures.append(classify_error(exc))  # 第 03 章：可重试 / 不可重试，错误码
                raise
            failures.append(None)
            return value

        value, error = await self.retry(attempt, *args, max_retries=self.max_retries, **kwargs)
        return self._finish(make_result(name, value, error, failures, (clock.now() - start) * 1000))

    def _finish(self, result):
        return result


from dataclasses import replace

class BudgetExecutor(RetryExecutor):
    """第 2 步：预算交给你的 truncate（文字）和 parse（其余的值），完整输出留在 artifact。"""

    def __init__(self, parse=my.parse, truncate=my.truncate, **settings):
        super().__init__(**settings)              # max_retries、result_max_chars、retry 交给第 1 步
        self.parse, self.truncate = parse, truncate

    def _finish(self, result):
        if result.data is None:
            return result
        shown = fit_to_budget(result.data, self.result_max_chars, self.parse, self.truncate)
        return replace(result, data=shown, truncated=shown != result.data, artifact=result.data)


from collections import deque

class RecordingExecutor(BudgetExecutor):
    """第 3 步：记下每次调用（有上限），统计覆盖全部调用。"""

    def __init__(self, history_limit=1000, **settings):
        super().__init__(**settings)                        # 其余的设置交给前两步
        self.call_history = deque(maxlen=history_limit)     # 满了自动丢掉最旧的
        self.totals = {"calls": 0, "success": 0, "retries": 0, "ms": 0.0}

    def _finish(self, result):
        result = super()._finish(result)
        self.call_history.append(result)
        self.totals["calls"] += 1
        self.totals["success"] += result.ok
        self.totals["retries"] += result.attempts - 1
        self.totals["ms"] += result.duration_ms
        return result

    def get_summary(self):
        n = max(self.totals["calls"], 1)
        return {"total_calls": self.totals["calls"], "success_rate": self.totals["success"] / n,
                "avg_duration_ms": round(self.totals["ms"] / n, 1), "retries": self.totals["retries"]}


from toolkit import ToolRegistry

class MyExecutor(RecordingExecutor):
    """课堂版执行器：重试用你的 retry，预算用你的 parse 和 truncate，记下每次调用；run_agent 和你的循环都能用。"""

    def __init__(self, registry=None, **settings):
        super().__init__(**settings)                        # 其余的设置交给前三步
        self.registry = registry if registry is not None else ToolRegistry()

    async def run_tool_calls(self, calls, registry=None):
        """模型的一批调用（ToolCall）：先查注册表，再交给 execute；每个结果带上 call_id。"""
        registry = registry if registry is not None else self.registry
        results = []
        for call in calls:
            tool = registry.get(call.name)
            if tool is None or not isinstance(call.parsed, dict):   # 没有这个工具，或参数不是 JSON 对象
                result = ToolResult(call.name, None, f"没有工具 {call.name}，或参数不是 JSON 对象",
                                    error_type="fatal", attempts=0)
            else:
                result = await self.execute(tool.fn, call.name, **call.parsed)
            results.append(replace(result, call_id=call.id))
        return results


PIECE = MyExecutor
