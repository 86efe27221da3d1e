"""Running tools: the registry, the ToolExecutor, circuit breakers, history and the audit log.

`ToolExecutor.execute(tool_fn, name, *args)` is the textbook's executor with its
bugs fixed: only retryable errors are retried, waits have jitter, `data` is
always what the model will see (a JSON-serializable value within
`result_max_chars`), and the full output stays in `artifact`.
`run_tool_calls` runs a model's parallel tool calls under a concurrency limit;
every call gets exactly one ToolResult, whatever happens to the others.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable

from .clock import Clock, get_clock
from .parsing import ToolKind, dumps, fit_for_model, shrink_json
from .results import (FATAL, PARTIAL, RETRYABLE, ErrorInfo, PartialResult, ToolResult,
                      classify_error, redact, safe_str)
from .retry import RetryBudget, RetryPolicy, call_tool_with_retry
from .safety import redact_value

__all__ = ["Tool", "ToolRegistry", "ToolExecutor", "CircuitBreaker", "ToolCall", "parse_tool_call"]

_PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean",
               list: "array", dict: "object"}


def _schema_from_signature(fn: Callable) -> dict:
    """A JSON schema from a function's signature (str/int/float/bool/list/dict hints)."""
    props: dict[str, dict] = {}
    required: list[str] = []
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:
        hints = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        json_type = _PY_TO_JSON.get(hints.get(name))
        props[name] = {"type": json_type} if json_type else {}
        if param.default is param.empty:
            required.append(name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    """A registered tool: the function and what the model is told about it.

    kind: "query" / "read" / "write" preprocessing (see parse_tool_result).
    writes: True if the tool changes something: it is then not retried after
    a timeout unless the call carries an "idempotency_key" argument.
    fallback: the name of a tool to use while this one's circuit is open.
    """

    name: str
    fn: Callable[..., Any]
    description: str
    parameters: dict
    kind: ToolKind | None = None
    writes: bool = False
    fallback: str | None = None

    def openai_schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}

    def anthropic_schema(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call a tool, in any wire format, normalized."""

    id: str | None
    name: str
    arguments: Any  # the raw JSON string (or an already-parsed dict)


def parse_tool_call(tool_call: Any) -> ToolCall:
    """Normalize an openai SDK tool call, a Chat/Responses dict or an Anthropic tool_use block.

    Never raises: whatever is missing comes back empty, to be refused later.
    """
    def get(obj: Any, key: str) -> Any:
        try:
            return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
        except Exception:  # a property that raises (a half-built SDK object): the field is missing
            return None

    function = get(tool_call, "function")
    source = function if function is not None else tool_call
    call_id = get(tool_call, "id") or get(tool_call, "call_id") or get(tool_call, "tool_use_id")
    arguments = get(source, "arguments")
    if arguments is None:
        arguments = get(source, "input")
    name = get(source, "name")
    return ToolCall(None if call_id is None else safe_str(call_id, 200),
                    "" if name is None else safe_str(name, 200), arguments)


def _jsonschema() -> Any:
    """jsonschema, imported on first use (importing toolkit stays fast).

    jsonschema's optional IRI format checker imports rfc3987_syntax, which builds a
    grammar at import time (about 1 s). Argument checking never checks formats, so
    that module is hidden while jsonschema is first imported, and only then.
    """
    hide = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
    if hide:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # makes its import fail fast
    try:
        import jsonschema
    finally:
        if hide:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


class ToolRegistry:
    """The tools a model may call, their JSON schemas, and argument checking."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, tuple[Tool, Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        if not tool.name or not isinstance(tool.name, str):
            raise ValueError(f"a tool needs a non-empty name, got {tool.name!r}")
        self._tools[tool.name] = tool
        return tool

    def _validator(self, tool: Tool) -> Any:
        """The tool's JSON-schema validator, built once per registered tool."""
        cached = self._validators.get(tool.name)
        if cached is None or cached[0] is not tool:
            cached = self._validators[tool.name] = (tool, _jsonschema().Draft202012Validator(tool.parameters))
        return cached[1]

    def register(self, fn: Callable | None = None, *, name: str | None = None,
                 description: str | None = None, parameters: dict | None = None,
                 kind: ToolKind | None = None, writes: bool = False, fallback: str | None = None):
        """Register `fn` (also usable as a decorator). The schema defaults to one from its signature."""
        def wrap(f: Callable) -> Callable:
            doc = (inspect.getdoc(f) or "").strip()
            self.add(Tool(name or f.__name__, f, description or doc or (name or f.__name__),
                          parameters or _schema_from_signature(f), kind, writes, fallback))
            return f
        return wrap(fn) if fn is not None else wrap

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def openai_tools(self) -> list[dict]:
        """The `tools=[...]` list for Chat Completions."""
        return [t.openai_schema() for t in self._tools.values()]

    def anthropic_tools(self) -> list[dict]:
        return [t.anthropic_schema() for t in self._tools.values()]

    def check_arguments(self, tool: Tool, raw: Any) -> tuple[dict | None, ErrorInfo | None]:
        """Parse and validate arguments: (arguments, None) or (None, why they were refused)."""
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            args: Any = {}
        elif isinstance(raw, str):
            try:
                args = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                return None, ErrorInfo(FATAL, "INVALID_ARGUMENTS_JSON",
                                       f"工具 {tool.name} 的参数不是合法 JSON（{safe_str(exc, 120)}），请重新生成参数")
        else:
            args = raw
        if not isinstance(args, dict):
            return None, ErrorInfo(FATAL, "INVALID_ARGUMENTS",
                                   f"工具 {tool.name} 的参数必须是 JSON 对象，收到的是 {type(args).__name__}")
        try:
            errors = sorted(self._validator(tool).iter_errors(args), key=lambda e: list(e.path))
        except Exception as exc:  # a broken schema is the tool author's bug: say so
            return None, ErrorInfo(FATAL, "BAD_TOOL_SCHEMA", f"工具 {tool.name} 的参数定义有误：{safe_str(exc, 200)}")
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.path) or "(顶层)"
            return None, ErrorInfo(FATAL, "INVALID_ARGUMENTS",
                                   f"工具 {tool.name} 的参数不符合定义：{where}: {safe_str(err.message, 200)}")
        return args, None


@dataclass
class CircuitBreaker:
    """Per-tool circuit breaker: after `failure_threshold` consecutive retryable
    failures, calls fail fast (or go to the tool's fallback) for `cooldown`
    seconds; then one trial call decides whether it closes again."""

    failure_threshold: int = 5
    cooldown: float = 30.0
    _failures: dict[str, int] = field(default_factory=dict)
    _opened_at: dict[str, float] = field(default_factory=dict)

    def state(self, name: str, now: float) -> str:
        """"closed", "open" or "half_open"."""
        if name not in self._opened_at:
            return "closed"
        return "open" if now - self._opened_at[name] < self.cooldown else "half_open"

    def allow(self, name: str, now: float) -> bool:
        """Whether a call may go ahead; after the cool-down only one trial call does."""
        state = self.state(name, now)
        if state == "half_open":
            self._opened_at[name] = now  # the others fail fast until the trial's result is recorded
        return state != "open"

    def record(self, name: str, ok: bool, now: float) -> None:
        if ok:
            self._failures.pop(name, None)
            self._opened_at.pop(name, None)
            return
        self._failures[name] = self._failures.get(name, 0) + 1
        if self._failures[name] >= self.failure_threshold or name in self._opened_at:
            self._opened_at[name] = now


@dataclass
class _Stats:
    calls: int = 0
    success: int = 0
    partial: int = 0
    failed: int = 0
    retries: int = 0
    duration_ms: float = 0.0


class ToolExecutor:
    """Runs tools with retries, budgets results, and keeps history and statistics.

    max_retries: retries after the first attempt (transient errors only).
    result_max_chars: the JSON of `ToolResult.data` is at most this long.
    concurrency: how many tool calls of one batch run at once.
    history_limit: how many results `call_history` keeps (statistics count all).
    policy / breaker / budget: a RetryPolicy, a CircuitBreaker and a RetryBudget
    (shared by all tools) to use instead of the defaults.
    """

    def __init__(self, max_retries: int = 3, result_max_chars: int = 8000, *,
                 policy: RetryPolicy | None = None, registry: ToolRegistry | None = None,
                 concurrency: int = 8, history_limit: int = 10_000,
                 breaker: CircuitBreaker | None = None, budget: RetryBudget | None = None,
                 clock: Clock | None = None) -> None:
        if not isinstance(result_max_chars, int) or result_max_chars < 20:
            raise ValueError(f"result_max_chars must be an int >= 20, got {result_max_chars!r}")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an int >= 1, got {concurrency!r}")
        self.policy = policy or RetryPolicy(max_retries=max_retries)
        if budget is not None:
            self.policy = self.policy.with_(budget=budget)
        self.max_retries = self.policy.max_retries
        self.result_max_chars = result_max_chars
        self.registry = registry or ToolRegistry()
        self.concurrency = concurrency
        self.breaker = breaker
        self.clock = clock
        self.call_history: deque[ToolResult] = deque(maxlen=history_limit)
        self._stats: dict[str, _Stats] = {}
        self.listeners: list[Callable[[ToolResult], None]] = []

    # --- one call ---------------------------------------------------------------
    async def execute(self, tool_fn: Callable[..., Any], tool_name: str, *args: Any, **kwargs: Any) -> ToolResult:
        """Run one tool (sync or async) with retries; returns a ToolResult, never raises for tool errors."""
        return await self._execute(tool_fn, tool_name, args, kwargs)

    async def _execute(self, tool_fn: Callable, name: str, args: tuple, kwargs: dict, *,
                       call_id: str | None = None, kind: ToolKind | None = None,
                       policy: RetryPolicy | None = None, fallback: Tool | None = None) -> ToolResult:
        clock = self.clock or get_clock()
        start = clock.now()
        summary = _args_summary(args, kwargs)
        if self.breaker is not None and not self.breaker.allow(name, start):
            if fallback is not None:
                result = await self._execute(fallback.fn, fallback.name, args, kwargs, call_id=call_id,
                                             kind=fallback.kind, policy=policy)
                result.note = f"工具 {name} 连续失败，已暂停调用（熔断）；这是备用工具 {fallback.name} 的结果"
                return result
            return self._finish(ToolResult(
                name, None, f"工具 {name} 连续失败，已暂停调用 {self.breaker.cooldown:g} 秒（熔断），请换用其他工具或稍后再试",
                error_type=RETRYABLE, error_code="CIRCUIT_OPEN", attempts=0, call_id=call_id,
                started_at=start, args_summary=summary))
        if _RESERVED.isdisjoint(kwargs):  # the tool's arguments go straight through
            outcome = await call_tool_with_retry(tool_fn, *args, policy=policy or self.policy, clock=clock, **kwargs)
        else:  # a tool argument named like one of call_tool_with_retry's own: hide them in a closure
            outcome = await call_tool_with_retry(lambda: tool_fn(*args, **kwargs), policy=policy or self.policy,
                                                 clock=clock)
        value, error = outcome
        end = clock.now()
        result = ToolResult(name, None, duration_ms=(end - start) * 1000.0, attempts=len(outcome.attempts),
                            call_id=call_id, started_at=start, args_summary=summary, trace=outcome.attempts)
        if error is None and isinstance(value, PartialResult):
            result.data, result.truncated = _fit(value.data, self.result_max_chars, kind)
            result.artifact = value.data
            result.missing = safe_str(value.missing)
            result.error, result.error_type = f"部分结果缺失：{result.missing}", PARTIAL
        elif error is None:
            result.data, result.truncated = _fit(value, self.result_max_chars, kind)
            result.artifact = value
        else:
            info = outcome.info
            result.error, result.error_type, result.error_code = redact(error), info.error_type, info.code
            if value is not None:  # the tool's own error envelope: show it to the model
                result.data, result.truncated = _fit(value, self.result_max_chars)
                result.artifact = value
        if self.breaker is not None and result.error_type != PARTIAL:
            self.breaker.record(name, result.error_type != RETRYABLE, end)
        return self._finish(result)

    def _finish(self, result: ToolResult) -> ToolResult:
        self.call_history.append(result)
        stats = self._stats.get(result.name)
        if stats is None:  # not setdefault(name, _Stats()): that builds a _Stats on every call
            stats = self._stats[result.name] = _Stats()
        stats.calls += 1
        if result.attempts > 1:
            stats.retries += result.attempts - 1
        stats.duration_ms += result.duration_ms
        if result.ok:
            stats.success += 1
        elif result.error_type == PARTIAL:
            stats.partial += 1
        else:
            stats.failed += 1
        if self.listeners:
            for listener in list(self.listeners):
                listener(result)
        return result

    # --- model tool calls -----------------------------------------------------------
    async def run_tool_call(self, tool_call: Any, registry: ToolRegistry | None = None) -> ToolResult:
        """Run one model tool call through the registry: unknown tools, arguments that
        are not JSON or break the schema become error results, never exceptions."""
        registry = registry or self.registry
        call = parse_tool_call(tool_call)
        tool = registry.get(call.name)
        if tool is None:
            known = "、".join(registry.names) or "（无）"
            return self._refuse(call, ErrorInfo(FATAL, "UNKNOWN_TOOL",
                                                f"没有名为 {call.name or '（空）'} 的工具；可用工具：{known}"))
        args, problem = registry.check_arguments(tool, call.arguments)
        if problem is not None:
            return self._refuse(call, problem)
        policy = self.policy
        if tool.writes and not args.get("idempotency_key"):
            policy = policy.with_(idempotent=False)
        fallback = registry.get(tool.fallback) if tool.fallback else None
        return await self._execute(tool.fn, tool.name, (), args, call_id=call.id, kind=tool.kind,
                                   policy=policy, fallback=fallback)

    def _refuse(self, call: ToolCall, info: ErrorInfo) -> ToolResult:
        clock = self.clock or get_clock()
        return self._finish(ToolResult(call.name or "(unknown)", None, info.message, error_type=info.error_type,
                                       error_code=info.code, attempts=0, call_id=call.id,
                                       started_at=clock.now(), args_summary=safe_str(call.arguments, 200)))

    async def run_tool_calls(self, tool_calls: Iterable[Any], registry: ToolRegistry | None = None) -> list[ToolResult]:
        """Run a model's parallel tool calls, at most `concurrency` at a time.

        Returns one ToolResult per call, in the calls' order. One failing call
        never fails the batch; cancelling the batch cancels every call in it.
        """
        calls = list(tool_calls)
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(call: Any) -> ToolResult:
            async with semaphore:
                try:
                    return await self.run_tool_call(call, registry)
                except Exception as exc:  # a bug below must not sink the other calls
                    info = classify_error(exc)
                    return self._refuse(parse_tool_call(call), info)

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(call)) for call in calls]
        return [task.result() for task in tasks]

    # --- records --------------------------------------------------------------------
    def get_summary(self) -> dict:
        """Totals over every call so far: total_calls, success_rate, avg_duration_ms,
        retries, partial, failed, and per_tool counts."""
        total = sum(s.calls for s in self._stats.values())
        success = sum(s.success for s in self._stats.values())
        duration = sum(s.duration_ms for s in self._stats.values())
        return {
            "total_calls": total,
            "success_rate": round(success / max(total, 1), 4),
            "avg_duration_ms": round(duration / max(total, 1), 1),
            "retries": sum(s.retries for s in self._stats.values()),
            "partial": sum(s.partial for s in self._stats.values()),
            "failed": sum(s.failed for s in self._stats.values()),
            "per_tool": {name: {"calls": s.calls, "success": s.success, "partial": s.partial,
                                "failed": s.failed, "retries": s.retries}
                         for name, s in self._stats.items()},
        }

    def audit_records(self, task_id: str | None = None) -> list[dict]:
        """One dict per call in history: the audit log the lesson asks for (no secrets)."""
        return [_audit(r, task_id) for r in self.call_history]

    def export_jsonl(self, file: IO[str], task_id: str | None = None) -> int:
        """Write the audit log as JSON Lines to an open text file; returns the line count."""
        records = self.audit_records(task_id)
        for record in records:
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
        return len(records)

    def reset(self) -> None:
        """Forget history and statistics."""
        self.call_history.clear()
        self._stats.clear()


_RESERVED = frozenset({"max_retries", "policy", "clock", "on_attempt"})  # call_tool_with_retry's own keywords


def _fit(value: Any, max_chars: int, kind: ToolKind | None = None) -> tuple[Any, bool]:
    """fit_for_model, also counting a string's JSON escapes (a newline is 2 characters in JSON),
    with anything that looks like a key redacted (redaction only ever shortens)."""
    if value is None:
        return None, False
    data, cut = fit_for_model(value, max_chars, kind)
    for _ in range(3):
        if not isinstance(data, str) or len(dumps(data)) <= max_chars:
            return redact_value(data), cut
        over = len(dumps(data)) - max_chars
        data, cut = fit_for_model(value, max(len(data) - over - 8, 20), kind)[0], True
    return redact_value(data if len(dumps(data)) <= max_chars else shrink_json(data, max_chars)), True


def _args_summary(args: tuple, kwargs: dict) -> str:
    if not args and not kwargs:  # the common no-argument call: skip three regex passes
        return ""
    parts = [safe_str(a, 80) for a in args] + [f"{safe_str(k, 40)}={safe_str(v, 80)}" for k, v in kwargs.items()]
    return safe_str(", ".join(parts), 200)


def _payload(data: Any) -> Any:
    """The part worth summarizing: a seed-003 envelope's "data" when it has one."""
    if isinstance(data, dict) and data.get("data") not in (None, "", [], {}) and "status" in data:
        return data["data"]
    return data


def _audit(result: ToolResult, task_id: str | None) -> dict:
    source = result.artifact.get("source") if isinstance(result.artifact, dict) else None
    return {
        "task_id": task_id, "tool": result.name, "call_id": result.call_id,
        "arguments": redact(result.args_summary or ""), "status": result.status,
        "error_type": result.error_type, "error_code": result.error_code,
        "error": redact(result.error) if result.error else None,
        "source": redact_value(source) if isinstance(source, (list, str)) else None,  # URLs can carry keys
        "result_summary": redact(safe_str(dumps(fit_for_model(_payload(result.data), 200)[0]), 200)),
        "attempts": result.attempts, "duration_ms": round(result.duration_ms, 1),
        "started_at": round(result.started_at, 3),
    }
