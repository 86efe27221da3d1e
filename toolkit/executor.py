"""Running tools: the ToolExecutor, one tool call from its arguments to its ToolResult.

`ToolExecutor.execute(tool_fn, name, *args)` is the original course code's executor with its
bugs fixed: only retryable errors are retried, waits have jitter, `data` is
always what the model will see (a JSON-serializable value within
`result_max_chars`), and the full output stays in `artifact` (the history
keeps full outputs within `history_bytes`: toolkit.retention).
`run_tool_calls` runs a model's parallel tool calls under a concurrency limit;
every call gets exactly one ToolResult, whatever happens to the others.
The tools and their schemas live in toolkit.registry, the circuit breaker in
toolkit.breaker, history, statistics and the audit log in toolkit.audit.
"""
from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections import deque
from typing import IO, Any, Callable, Iterable

from . import wording
from .audit import CallRecords
from .breaker import CircuitBreaker
from .clock import Clock, get_clock, use_clock
from .fitting import ToolKind, fit_and_redact
from .guard import PluginError, own_failure
from .hooks import Hook, HookError, ToolEvent, call_hooks
from .plugins import ParseFn, RetryFn, TruncateFn, apply_parse, apply_truncate, run_retry_plugin
from .redaction import redact, safe_str
from .registry import Tool, ToolRegistry
from .results import (FATAL, PARTIAL, RETRYABLE, UNAVAILABLE_CODES, ErrorCode, ErrorInfo, PartialResult, ToolResult,
                      classify_error)
from .retention import HISTORY_BYTES
from .retry import Attempt, RetryBudget, RetryOutcome, RetryPolicy, retry_call
from .safety import redact_value
from .wire import ToolCall, parse_tool_call

__all__ = ["ToolExecutor"]

class ToolExecutor:
    """Runs tools with retries, budgets results, and keeps history and statistics.

    max_retries: retries after the first attempt (transient errors only; default 3),
    or policy: a whole RetryPolicy (give one of the two, not both).
    result_max_chars: the JSON of `ToolResult.data` is at most this long.
    concurrency: how many tool calls of one batch run at once.
    history_limit: how many results `call_history` keeps (statistics count all).
    history_bytes: how many bytes of full outputs (`artifact`) the history keeps
    in all; one larger than a quarter of it is not kept, and the oldest go first.
    A history entry whose output went has `artifact` None and `artifact_released`
    saying how big it was and why; the ToolResult a call returns keeps its own.
    breaker / budget: a CircuitBreaker and a RetryBudget (shared by all tools;
    kept as `self.breaker` and `self.budget`), or None for none.
    clock: leave it None to use the current clock (`use_clock`), as everything
    else does; a clock given here overrides the current one for this
    executor's calls and everything they run (tools, inject_faults latency).
    hooks: functions called with a frozen ToolEvent when an attempt starts or
    ends, before a backoff wait, when a call is finished, when a tool's circuit
    changes state or refuses a call, and when the retry budget is spent,
    refunded or denied (toolkit.hooks lists the kinds; `self.hooks` is a list:
    append later too). What a hook raises is kept in `hook_errors`, never raised
    into a call; its traceback is kept as text (a note on the exception), not as
    frames, which would hold the call's full output.

    A tool's fallback (Tool.fallback, through `run_tool_call`) answers when the
    tool's circuit is open, and when the tool's retries ended on a service that
    is down (UNAVAILABLE, BAD_GATEWAY); the model is told in the result's note.

    Plug-in points, for a student's own piece (each None: the toolkit's):
    parse(raw_output, max_chars) -> value: turns the tool's raw output into
      `ToolResult.data`; must return a JSON-serializable value within
      max_chars (a string: its length; else its JSON's). Secrets are still
      redacted afterwards.
    truncate(text, max_chars) -> str: cuts text output longer than max_chars
      (also a string parse returned); must return a str of at most max_chars
      characters, which the model then sees as it is. Other output (dicts,
      lists) still goes through the toolkit's fit_for_model.
    retry(tool_fn, *args, max_retries=N, **kwargs) -> (result, error), sync or
      async: replaces call_tool_with_retry; error is None or a str.
    A plug-in that raises (any exception, GeneratorExit or a CancelledError of its
    own included) or returns the wrong type gives an error ToolResult with
    error_code PLUGIN_ERROR naming the plug-in, never an exception. Only
    KeyboardInterrupt, SystemExit and a cancellation from outside propagate.
    Raises ValueError (in Chinese) for settings that cannot work.
    """

    def __init__(self, max_retries: int | None = None, result_max_chars: int = 8000, *,
                 policy: RetryPolicy | None = None, registry: ToolRegistry | None = None,
                 concurrency: int = 8, history_limit: int = 10_000, history_bytes: int = HISTORY_BYTES,
                 breaker: CircuitBreaker | None = None, budget: RetryBudget | None = None,
                 clock: Clock | None = None, hooks: Iterable[Hook] = (),
                 parse: ParseFn | None = None, truncate: TruncateFn | None = None,
                 retry: RetryFn | None = None) -> None:
        if max_retries is not None and policy is not None:
            raise ValueError(wording.max_retries_beside_policy(max_retries, "ToolExecutor(policy=RetryPolicy"))
        if not isinstance(result_max_chars, int) or isinstance(result_max_chars, bool) or result_max_chars < 20:
            raise ValueError(f"result_max_chars 应是不小于 20 的整数，收到 {result_max_chars!r}：请改成 20 或更大，例如 8000")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency 应是不小于 1 的整数，收到 {concurrency!r}：请改成 1 或更大")
        if not isinstance(history_bytes, int) or isinstance(history_bytes, bool) or history_bytes < 0:
            raise ValueError(f"history_bytes 应是不小于 0 的整数（字节数），收到 {history_bytes!r}：请改成 0 或正整数")
        for label, plugin in (("parse", parse), ("truncate", truncate), ("retry", retry)):
            if plugin is not None and not callable(plugin):
                raise ValueError(f"{label} 应是一个函数或 None，收到 {plugin!r}：请传函数本身（不加括号），或 None")
        if policy is None:
            policy = RetryPolicy(max_retries=3 if max_retries is None else max_retries)
        self.policy = policy
        self.max_retries = self.policy.max_retries
        self.budget = budget
        self.result_max_chars = result_max_chars
        self.registry = registry or ToolRegistry()
        self.concurrency = concurrency
        self.breaker = breaker
        self.clock = clock
        self.parse, self.truncate, self.retry = parse, truncate, retry
        self.records = CallRecords(history_limit, history_bytes)
        self.call_history: deque[ToolResult] = self.records.history
        self.hooks: list[Hook] = list(hooks)
        self.hook_errors: deque[HookError] = deque(maxlen=1000)

    def _clock_scope(self) -> contextlib.AbstractContextManager:
        """This executor's clock override for one call, or nothing (the current clock holds)."""
        return use_clock(self.clock) if self.clock is not None else contextlib.nullcontext()

    # --- one call ---------------------------------------------------------------
    async def execute(self, tool_fn: Callable[..., Any], tool_name: str, /, *args: Any, **kwargs: Any) -> ToolResult:
        """Run one tool (sync or async) with retries; returns a ToolResult, never raises for what the tool
        does: an exception (GeneratorExit and a CancelledError of its own too) is an error result, and so is
        a return value that cannot be read. KeyboardInterrupt, SystemExit and a cancellation from outside
        propagate. TypeError (in Chinese) for a tool_fn that is not a function."""
        if not callable(tool_fn):
            raise TypeError(wording.not_a_tool("execute 的第一个参数", tool_fn))
        with self._clock_scope():
            result = await self._execute(tool_fn, tool_name, args, kwargs)
        assert result is not None  # no fallback was offered, so the breaker's refusal is a result too
        return result

    async def _execute(self, tool_fn: Callable, name: str, args: tuple, kwargs: dict, *,
                       call_id: str | None = None, kind: ToolKind | None = None,
                       policy: RetryPolicy | None = None, fallback: str | None = None,
                       note: str | None = None) -> ToolResult | None:
        """One call through breaker, retries and budget, as one ToolResult built once.

        None when the circuit is open and `fallback` (a tool name) is to answer instead."""
        start = get_clock().now()
        summary = _args_summary(args, kwargs)
        trial = False
        if self.breaker is not None:
            allowed, trial = self._breaker_allows(name, call_id, start)
            if not allowed:
                self._emit(ToolEvent("breaker_reject", name, call_id, start, error_code=ErrorCode.CIRCUIT_OPEN,
                                     fallback=fallback))
                if fallback is not None:
                    return None
                return self._finish(ToolResult(
                    name, None, wording.circuit_open(name, self.breaker.cooldown),
                    error_type=RETRYABLE, error_code=ErrorCode.CIRCUIT_OPEN, attempts=0, truncated=False,
                    call_id=call_id, started_at=start, args_summary=summary, result_id=self.records.next_id()))
        outcome: RetryOutcome | None = None
        try:  # where a tool's value enters the road: the call, and our reading of what it returned
            outcome = await self._run(tool_fn, args, kwargs, policy or self.policy, name, call_id)
            result = self._result(name, outcome, kind, start, call_id, summary, note)
        except PluginError as exc:
            result = self._plugin_failed(name, exc, call_id, start, summary, outcome)
        except BaseException as exc:  # the tool boundary: a tool fails in any way, or what it returned cannot be read
            if not own_failure(exc):  # (its own GeneratorExit, a lazily loaded record whose store closed): a result
                raise
            result = self._failed(name, exc, outcome, call_id, start, summary, note)
        if self.breaker is not None:  # only "the service did not answer" counts against the circuit
            self._breaker_record(name, call_id, result.error_type != RETRYABLE, get_clock().now(), trial)
        return self._finish(result)

    async def _run(self, tool_fn: Callable, args: tuple, kwargs: dict, policy: RetryPolicy, name: str,
                   call_id: str | None) -> RetryOutcome:
        """The tool's attempts: the retry loop (no argument name is reserved), or the retry plug-in."""
        on_start, on_attempt, on_budget = self._observers(name, call_id) if self.hooks else (None, None, None)
        if self.retry is None:
            return await retry_call(policy, tool_fn, args, kwargs, budget=self.budget, on_attempt=on_attempt,
                                    on_attempt_start=on_start, on_budget=on_budget)
        return await run_retry_plugin(self.retry, policy, tool_fn, args, kwargs, on_attempt=on_attempt,
                                      on_attempt_start=on_start)

    def _result(self, name: str, outcome: RetryOutcome, kind: ToolKind | None, start: float,
                call_id: str | None, summary: str, note: str | None) -> ToolResult:
        """The ToolResult of a finished outcome, its data through the one budget pass."""
        raw, error, info, missing, error_type, code = outcome.data, outcome.error, outcome.info, None, None, None
        if error is None and isinstance(raw, PartialResult):
            raw, missing = raw.data, safe_str(raw.missing)
            error, error_type = wording.partial_missing(missing), PARTIAL
        elif error is not None:
            assert info is not None  # the retry loop (or the retry plug-in's check) classified the failure
            error, error_type, code = redact(error), info.error_type, info.error_code
        failed = error_type not in (None, PARTIAL)
        # the one budget pass: ToolResult.data is what the model reads, nobody fits it again
        data, truncated = (None, False) if failed and raw is None else self._fit(raw, None if failed else kind)
        return ToolResult(name, data, error, (get_clock().now() - start) * 1000.0, error_type,
                          attempts=outcome.attempts, error_code=code, missing=missing, truncated=truncated,
                          artifact=raw, call_id=call_id, started_at=start, args_summary=summary, note=note,
                          trace=outcome.trace, source=outcome.source, result_id=self.records.next_id())

    def _fit(self, value: Any, kind: ToolKind | None) -> tuple[Any, bool]:
        """(ToolResult.data, truncated) for `value`: the toolkit's fit_and_redact, or the parse / truncate
        plug-ins (PluginError if one fails); what a plug-in returns is redacted like a tool's output."""
        max_chars = self.result_max_chars
        if self.parse is None and self.truncate is None:
            return fit_and_redact(value, max_chars, kind)
        changed = None
        if self.parse is not None:
            value, changed = apply_parse(self.parse, value, max_chars)
        if self.truncate is not None and isinstance(value, str) and len(value) > max_chars:
            value, changed = apply_truncate(self.truncate, value, max_chars), True
        if changed is not None:  # the plug-in's value stands
            return redact_value(value), changed
        return fit_and_redact(value, max_chars, kind)

    def _failed(self, name: str, exc: BaseException, outcome: RetryOutcome | None, call_id: str | None,
                start: float, summary: str, note: str | None) -> ToolResult:
        """The error ToolResult for a tool that raised past the retry loop (its own GeneratorExit or
        CancelledError: `outcome` None), or whose return value could not be read."""
        now = get_clock().now()
        if outcome is None:
            info = classify_error(exc)
            trace: tuple[Attempt, ...] = (Attempt(1, start, now, "error", info.error_type, info.error_code,
                                                  info.message),)
            error, error_type, code = info.message, info.error_type, info.error_code
        else:
            trace = outcome.trace
            error = wording.unreadable_output(f"{type(exc).__name__}: {safe_str(exc, 200)}")
            error_type, code = FATAL, ErrorCode.UNKNOWN
        return ToolResult(name, None, error, (now - start) * 1000.0, error_type, attempts=len(trace),
                          error_code=code, truncated=False, call_id=call_id, started_at=start, args_summary=summary,
                          note=note, trace=trace, result_id=self.records.next_id())

    def _plugin_failed(self, name: str, exc: PluginError, call_id: str | None, start: float, summary: str,
                       outcome: RetryOutcome | None) -> ToolResult:
        """The error ToolResult for a plug-in that failed or returned the wrong type."""
        return ToolResult(
            name, None, exc.message, (get_clock().now() - start) * 1000.0, FATAL,
            outcome.attempts if outcome is not None else 1, ErrorCode.PLUGIN_ERROR, truncated=False,
            call_id=call_id, started_at=start, args_summary=summary, note=f"plug-in: {exc.plugin}",
            trace=outcome.trace if outcome is not None else (),
            source=outcome.source if outcome is not None else None, result_id=self.records.next_id())

    def _breaker_allows(self, name: str, call_id: str | None, now: float) -> tuple[bool, bool]:
        """(whether the breaker lets the call through, whether it is the half-open trial); the change
        open -> half_open is an event."""
        breaker = self.breaker
        assert breaker is not None
        before = breaker.state(name, now)
        allowed = breaker.allow(name, now)
        trial = allowed and before != "closed"
        if trial:
            self._emit(ToolEvent("breaker_state", name, call_id, now, state="half_open", previous="open"))
        return allowed, trial

    def _breaker_record(self, name: str, call_id: str | None, ok: bool, now: float, trial: bool) -> None:
        """Record a finished call in the breaker; a change of state is an event."""
        breaker = self.breaker
        assert breaker is not None
        before = "half_open" if trial else breaker.state(name, now)
        breaker.record(name, ok, now)
        after = breaker.state(name, now)
        if after != before:
            self._emit(ToolEvent("breaker_state", name, call_id, now, state=after, previous=before,
                                 wait=breaker.cooldown if after == "open" else 0.0))

    def _observers(self, name: str, call_id: str | None) -> tuple[Callable[[int, float], None],
                                                                  Callable[[Attempt], None],
                                                                  Callable[[str, int, int], None]]:
        """on_attempt_start / on_attempt / on_budget callbacks that turn the retry loop's news into ToolEvents."""
        current = [0]  # the attempt running now: a budget event belongs to it

        def on_start(number: int, time: float) -> None:
            current[0] = number
            self._emit(ToolEvent("attempt_start", name, call_id, time, number))

        def on_attempt(attempt: Attempt) -> None:
            self._emit(ToolEvent("attempt_end", name, call_id, attempt.end, attempt.number, attempt.outcome,
                                 attempt.error_type, attempt.error_code, record=attempt))
            if attempt.wait_after > 0:
                self._emit(ToolEvent("wait", name, call_id, attempt.end, attempt.number, wait=attempt.wait_after))

        def on_budget(kind: str, cost: int, tokens: int) -> None:
            event = ToolEvent(f"budget_{kind}", name, call_id, get_clock().now(),  # type: ignore[arg-type]
                              current[0], cost=cost, tokens=tokens)
            self._emit(event)
        return on_start, on_attempt, on_budget

    def _emit(self, event: ToolEvent) -> None:
        errors: list[HookError] = []
        call_hooks(self.hooks, event, errors, event.kind)
        for error in errors:
            _release_frames(error.exception)
        self.hook_errors.extend(errors)

    def _finish(self, result: ToolResult) -> ToolResult:
        self.records.add(result)
        if self.hooks:
            self._emit(ToolEvent("call_end", result.name, result.call_id, get_clock().now(), result.attempts,
                                 result.status, result.error_type, result.error_code, result=result))
        return result

    # --- model tool calls -----------------------------------------------------------
    async def run_tool_call(self, tool_call: Any, registry: ToolRegistry | None = None) -> ToolResult:
        """Run one model tool call (a ToolCall, or a raw call in any wire format) through the registry:
        unknown tools, arguments that are not JSON or break the schema become error results, never exceptions.

        A tool whose circuit is open, or whose retries ended on a service that is
        down (UNAVAILABLE_CODES), goes to its fallback (Tool.fallback), which runs
        as itself: its own schema checks the arguments, its own `writes` decides
        whether a timeout may be retried; the result's note tells the model."""
        call = tool_call if isinstance(tool_call, ToolCall) else parse_tool_call(tool_call)
        with self._clock_scope():
            return await self._run_tool_call(call, registry or self.registry)

    async def _run_tool_call(self, call: ToolCall, registry: ToolRegistry) -> ToolResult:
        tool = registry.get(call.name)
        if tool is None:
            return self._refuse(call, ErrorInfo(FATAL, ErrorCode.UNKNOWN_TOOL,
                                                wording.unknown_tool(call.name, registry.names)))
        args, problem = registry.check_arguments(tool, call)
        if problem is not None:
            return self._refuse(call, problem)
        assert args is not None
        fallback = registry.get(tool.fallback) if tool.fallback else None
        if fallback is tool:
            fallback = None
        result = await self._execute(tool.fn, tool.name, (), args, call_id=call.id, kind=tool.kind,
                                     policy=self._policy_for(tool, args),
                                     fallback=fallback.name if fallback is not None else None)
        if fallback is None:
            assert result is not None
            return result
        if result is None:  # the circuit is open
            return await self._run_fallback(tool, fallback, args, call, registry, circuit_open=True)
        if result.status == "error" and result.error_code in UNAVAILABLE_CODES:  # its retries ended on a down service
            return await self._run_fallback(tool, fallback, args, call, registry, circuit_open=False)
        return result

    def _policy_for(self, tool: Tool, args: dict) -> RetryPolicy:
        """A writing tool is not retried after a timeout unless the call carries an idempotency_key."""
        if tool.writes and not args.get("idempotency_key"):
            return self.policy.with_(idempotent=False)
        return self.policy

    async def _run_fallback(self, tool: Tool, fallback: Tool, args: dict, call: ToolCall,
                            registry: ToolRegistry, *, circuit_open: bool) -> ToolResult:
        """`tool`'s fallback, under the fallback's own schema and policy; the note tells the model why it answers
        (`circuit_open`, else the tool's service was down after its retries)."""
        checked, problem = registry.check_arguments(fallback, args)
        if problem is not None:
            refused = ToolCall(call.id, fallback.name, call.arguments)
            why = wording.fallback_refused(tool.name, fallback.name, problem.message, circuit_open)
            return self._refuse(refused, ErrorInfo(problem.error_type, problem.error_code, why))
        note = (wording.fallback_note if circuit_open else wording.fallback_unavailable_note)(tool.name, fallback.name)
        assert checked is not None
        result = await self._execute(fallback.fn, fallback.name, (), checked, call_id=call.id, kind=fallback.kind,
                                     policy=self._policy_for(fallback, checked), note=note)
        assert result is not None  # the fallback has no fallback of its own here
        return result

    def _refuse(self, call: ToolCall, info: ErrorInfo) -> ToolResult:
        return self._finish(ToolResult(call.name or "(unknown)", None, info.message, error_type=info.error_type,
                                       error_code=info.error_code, attempts=0, truncated=False, call_id=call.id,
                                       started_at=get_clock().now(), args_summary=safe_str(call.arguments, 200),
                                       result_id=self.records.next_id()))

    async def run_tool_calls(self, tool_calls: Iterable[Any], registry: ToolRegistry | None = None) -> list[ToolResult]:
        """Run a model's parallel tool calls (ToolCalls, or raw calls), at most `concurrency` at a time.

        Returns one ToolResult per call, in the calls' order. One failing call
        never fails the batch (nor does a hook that raises); cancelling the
        batch cancels every call in it.
        """
        calls = [c if isinstance(c, ToolCall) else parse_tool_call(c) for c in tool_calls]
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(call: ToolCall) -> ToolResult:
            async with semaphore:
                return await self.run_tool_call(call, registry)

        with self._clock_scope():
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(call)) for call in calls]
        return [task.result() for task in tasks]

    # --- records --------------------------------------------------------------------
    def get_summary(self) -> dict:
        """Totals over every call so far: total_calls, success_rate, avg_duration_ms,
        retries, partial, failed, and per_tool counts."""
        return self.records.summary()

    def audit_records(self, task_id: str | None = None) -> list[dict]:
        """One dict per call in history: the audit log the lesson asks for (no secrets)."""
        return self.records.audit_records(task_id)

    def export_jsonl(self, file: IO[str], task_id: str | None = None) -> int:
        """Write the audit log as JSON Lines to an open text file; returns the line count."""
        return self.records.export_jsonl(file, task_id)

    def read_artifact(self, result_id: Any, offset: Any = 0, max_chars: int = 2000) -> dict:
        """`max_chars` characters of the full output of result `result_id` (ToolResult.result_id) from `offset`,
        as a tool envelope a tool can return to the model as it is; a released or unknown one answers with an
        error saying so (toolkit.audit.CallRecords.read_artifact). Never raises."""
        return self.records.read_artifact(result_id, offset, max_chars)

    def reset(self) -> None:
        """Forget history, kept outputs and statistics."""
        self.records.reset()


def _release_frames(exc: BaseException) -> None:
    """Keep a hook's traceback as text (a note, shown wherever the exception is printed) and let its frames go:
    a frame holds its caller's, up to the event and the ToolResult with its full output, which a kept
    traceback would keep alive past the history's byte budget."""
    tb = exc.__traceback__
    if tb is not None:
        frames = "".join(traceback.format_tb(tb.tb_next or tb)).rstrip()
        exc.add_note("Traceback of the hook (kept as text):\n" + frames)
        exc.__traceback__ = None


def _args_summary(args: tuple, kwargs: dict) -> str:
    """The call's arguments as short, redacted text for the history and the audit log ("" for none)."""
    parts = [safe_str(a, 80) for a in args] + [f"{safe_str(k, 40)}={safe_str(v, 80)}" for k, v in kwargs.items()]
    return safe_str(", ".join(parts), 200) if parts else ""
