"""The agent loop: the model proposes tool calls, the program runs them, the model answers from the results.

    user question -> model -> tool_calls? -> registry + ToolExecutor -> one role "tool"
    message per tool_call_id ([TASK_CONTEXT] first for multi-step tasks) -> model -> ...
    -> a text answer, or a stop at `max_turns`.

One code path: `run_agent` talks to whatever `toolkit.llm.make_client()` returns
(the offline stand-in model on 127.0.0.1, or a real OpenAI-compatible endpoint
configured in .env), always through the openai SDK. Tool failures, unknown tools,
bad arguments and repeated calls reach the model as error tool messages, never as
exceptions; a reply that is not a chat completion stops the run with an error reason.

Two guards refuse a call without running it (the model gets an error message saying
why): the same tool with the same arguments again (REPEATED_CALL), and a tool that
already failed `max_tool_failures` times in a row, whatever its arguments
(TOOL_FAILURE_LIMIT: a model that keeps rewording its arguments after the same 500).

Each tool call is read once (`parse_tool_call`, its arguments decoded once)
and the ToolCall travels on to the executor. Each result is evaluated before
its message is formatted (`evaluate_tool_result` by default): the decision is
recorded in run.decisions, its action and suggestion go into the tool
message, and the loop acts on it (`toolkit.decisions.apply_decision`: a partial
result presented directly is shown as complete, a summary replaces the data),
so the model reads what the road decided. An evaluate that takes a `next_step`
keyword is told the task's step still to do after this one (from the TaskContext).

Three plug-in points let a student replace one piece (each a keyword of run_agent, sync or async):
format_message (how a result becomes the tool message), evaluate (what to do with a result:
recorded, and put in the message) and check (the verdict on the final answer, in run.check).
Each runs under toolkit.guard.run_plugin: one that fails in any way never crashes the run, the
model gets an error result (PLUGIN_ERROR, naming the plug-in) or the run an error reason. What
format_message returns is treated like tool output (toolkit.plugins.plugin_message).
"""
from __future__ import annotations

import inspect
import json
from dataclasses import replace
from typing import Any, Callable, Sequence

from ..approval import Approve
from ..clearing import ClearPolicy, context_chars, with_read_more
from ..clock import get_clock
from ..decisions import apply_decision, evaluate_tool_result
from ..executor import ToolExecutor
from ..guard import PluginError, run_plugin
from ..messages import decision_for_model, format_tool_message
from ..plugins import MESSAGE_FIELDS_CHARS, plugin_message
from ..redaction import redact, safe_str
from ..registry import ToolRegistry
from ..results import FATAL, RETRYABLE, ErrorCode, ToolResult
from ..retention import ArtifactBudget
from ..safety import redact_value
from ..task_context import TaskContext, split_steps, with_task_context
from ..wire import ToolCall, parse_tool_call
from .gates import ApprovalGate, Paused, cleared
from .record import AgentRun
from .sync import call_plugin, run_sync

__all__ = ["SYSTEM_PROMPT", "run_agent", "task_context_for", "FormatMessage", "Evaluate", "Check"]

SYSTEM_PROMPT = """你是一个资料分析助手，回答问题要有工具给出的证据。
1. 需要具体数字、统计、天气或航班等事实时，先调用提供的工具，不要凭记忆或猜测给出数字。
2. 工具返回的 JSON 是事实的唯一依据：回答里的每个数字都必须能在工具结果里找到。
3. 工具结果的 status 为 error 时，如实告诉用户这一步失败了以及原因，不要编造结果，也不要换个说法假装成功。
4. 如果工具结果前面有 [TASK_CONTEXT]，先看清整个任务还剩哪些步骤，做完所有步骤再回答。
5. 同样的工具和参数不要重复调用，结果不会改变；信息足够时直接用中文回答，说明关键结果。"""

FormatMessage = Callable[[str, str, ToolResult], Any]
"""format_message(tool_name, tool_call_id, result) -> the Chat Completions tool message
{"role": "tool", "tool_call_id": tool_call_id, "content": str} (sync or async)."""
Evaluate = Callable[[ToolResult, str], Any]
"""evaluate(result, user_query) -> a decision dict such as the Decision evaluate_tool_result returns
({"action", "suggestion", ...}; the action and the suggestion go into the tool message and the loop acts on
the action, see apply_decision; one that also takes `next_step=` gets the task's next step; sync or async)."""
Check = Callable[[str, list], Any]
"""check(answer, tool_results) -> any verdict (e.g. an AnswerCheck); kept in run.check (sync or async)."""


def task_context_for(question: str, task_context: TaskContext | bool | str = "auto") -> TaskContext | None:
    """The TaskContext a run starts with.

    "auto": one when `split_steps` finds two or more steps, else None.
    True: always one (a single step is the whole question). False / None: none.
    A TaskContext: a copy of it (the caller's object is never changed).
    Raises ValueError for any other value.
    """
    if isinstance(task_context, TaskContext):
        return replace(task_context, steps=list(task_context.steps))
    if task_context is False or task_context is None:
        return None
    if task_context is True or task_context == "auto":
        steps = split_steps(question) or [question.strip()]
        if task_context == "auto" and len(steps) < 2:
            return None
        return TaskContext(task=question.strip(), steps=steps)
    raise ValueError(f"task_context 只能是 'auto'、True、False 或一个 TaskContext，收到 {task_context!r}："
                     "请改用其中之一（'auto' 是默认值）")


def run_agent(question: str, *, client: Any = None, model: str | None = None,
              registry: ToolRegistry | None = None, executor: ToolExecutor | None = None,
              max_turns: int = 6, max_tool_failures: int | None = 3,
              task_context: TaskContext | bool | str = "auto",
              system_prompt: str = SYSTEM_PROMPT, format_message: FormatMessage | None = None,
              evaluate: Evaluate | None = evaluate_tool_result, check: Check | None = None,
              approve: Approve = None, clear: "ClearPolicy | Callable[[list], list] | None" = None) -> AgentRun:
    """Answer `question` with the model and the registry's tools; returns an AgentRun.

    client/model: an openai.OpenAI client and the model name; with client None both
    come from `toolkit.llm.make_client()` (offline unless .env / the environment
    configure a real endpoint). registry: the tools offered (default
    `toolkit.tools.default_registry()`, or the executor's own registry when it has
    tools); executor: runs them (default a ToolExecutor over the registry).
    max_turns: the most model calls before stopping with stopped="max_turns".
    max_tool_failures: after this many failed runs of one tool in a row (any
    arguments; a success resets the count), further calls of that tool are not
    run: the model reads a TOOL_FAILURE_LIMIT error telling it to stop and report.
    None: no limit.
    task_context: see `task_context_for`; the context advances one step per
    successful tool result and is put before every tool message.
    approve: who says yes to a tool registered with needs_approval (toolkit.approval):
    a function, True/False for scripts and CI, or None to pause the run
    (stopped="needs_approval"; `resume(run, approved)` goes on). clear: a
    toolkit.clearing.ClearPolicy, or a function messages -> messages (a student's),
    applied to what the model is sent before every model call (run.messages keeps
    everything; each model step of the transcript records "context_chars", the
    size sent; a function that fails sends the whole list and says so in
    "clear_error"). With a tool named read_more in the
    registry, a cut result's message carries its handle ("more": result id).
    format_message / evaluate / check: the plug-in points (module doc), each
    sync or async: format_message None is format_tool_message (a plug-in's
    message is checked: only role, tool_call_id and content pass, its content
    redacted, within result_max_chars + MESSAGE_FIELDS_CHARS, with warnings for
    instruction-like text); evaluate defaults to evaluate_tool_result (None: no
    decisions, and none in the messages); check None is no check.

    Never raises for what the model does (unknown tools, bad arguments, repeats,
    failing tools: error tool messages; a malformed reply: stopped="error") nor
    for a failing endpoint (stopped="error") nor for a failing plug-in or tool
    (any exception, GeneratorExit, a CancelledError it made itself).
    KeyboardInterrupt cancels the running tools and propagates; so do SystemExit
    and a cancellation from outside.
    Raises ValueError for an empty question, max_turns < 1, max_tool_failures
    < 1, a client without a model, and toolkit.llm.ConfigError (a ValueError) for a bad .env.
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question（要问的问题）不能为空，收到 {question!r}：请把要问的话作为第一个参数传入，"
                         "例如 run_agent(\"哪个类别销售额最高？\")")
    if not _whole(max_turns) or max_turns < 1:
        raise ValueError(f"max_turns 是最多调用几次模型，应是不小于 1 的整数，收到 {max_turns!r}：请改成 1 或更大，例如 6")
    if max_tool_failures is not None and (not _whole(max_tool_failures) or max_tool_failures < 1):
        raise ValueError(f"max_tool_failures 是同一工具连续失败几次后不再调用，应是不小于 1 的整数或 None，"
                         f"收到 {max_tool_failures!r}：请改成 1 或更大，或 None（不限）")
    for name, fn in (("format_message", format_message), ("evaluate", evaluate), ("check", check),
                     ("clear", None if isinstance(clear, ClearPolicy) else clear)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} 应是一个函数或 None，收到 {type(fn).__name__}：请传函数本身（不加括号），或 None")
    client, model = _client_and_model(client, model)
    if registry is None:
        registry = executor.registry if executor is not None and len(executor.registry) else _default_registry()
    executor = executor if executor is not None else ToolExecutor(registry=registry)
    loop = _Loop(question.strip(), client, model, registry, executor,
                 task_context_for(question, task_context), system_prompt)
    loop.format_message, loop.evaluate, loop.check = format_message, evaluate, check
    loop.approve, loop.clear = approve, clear
    loop.max_tool_failures = max_tool_failures
    return loop.run(max_turns)


def _client_and_model(client: Any, model: str | None) -> tuple[Any, str]:
    if client is None:
        from ..llm import make_client  # the model side loads only when needed

        client, default_model = make_client()
        return client, model or default_model
    if not model:
        raise ValueError("传了 client 就要同时传 model：请写成 run_agent(问题, client=client, model=\"模型名\")，"
                         "模型名与 client 连接的服务一致")
    return client, model


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _default_registry() -> ToolRegistry:
    from ..tools import default_registry

    return default_registry()


class _EmptyReply(Exception):
    """The model answered with neither text nor tool calls (args[0] says how)."""


def _takes_next_step(plugin: Callable[..., Any]) -> bool:
    """Whether the plug-in has a `next_step` parameter (one whose signature cannot be read has not)."""
    try:
        return "next_step" in inspect.signature(plugin).parameters
    except (TypeError, ValueError):  # a builtin or a callable object without a signature
        return False


def _plugin_failure(failed: PluginError, result: ToolResult) -> ToolResult:
    """The error result the model gets instead, when a plug-in failed on `result`."""
    return ToolResult(result.name, None,
                      f"插件 {failed.plugin} 出错（{failed.detail}），工具 {result.name} 的结果无法交给模型",
                      error_type=FATAL, error_code=ErrorCode.PLUGIN_ERROR, attempts=result.attempts, truncated=False,
                      call_id=result.call_id,
                      started_at=result.started_at, duration_ms=result.duration_ms, args_summary=result.args_summary)


class _Loop(ApprovalGate):
    """One run's state: the conversation, the transcript, the calls seen so far."""

    format_message: FormatMessage | None = None
    evaluate: Evaluate | None = None
    check: Check | None = None
    approve: Approve = None
    clear: "ClearPolicy | Callable[[list], list] | None" = None
    max_tool_failures: int | None = None

    def __init__(self, question: str, client: Any, model: str, registry: ToolRegistry,
                 executor: ToolExecutor, ctx: TaskContext | None, system_prompt: str) -> None:
        self.client, self.model, self.registry, self.executor, self.ctx = client, model, registry, executor, ctx
        self.clock = get_clock()
        self.run_record = AgentRun(question, "", "error", model, task_context=ctx)
        self.run_record.messages = [{"role": "system", "content": system_prompt},
                                    {"role": "user", "content": question}]
        self.seen: dict[tuple[str, str], tuple[int, str | None]] = {}  # -> (call number, error_type): no result
        self.given: dict[str, tuple[bool, str]] = {}  # call id -> a person's decision (resume)
        self.max_turns = 0
        self.failures: dict[str, list[str]] = {}  # tool name -> error codes of its failed runs since its last success
        self.outputs = ArtifactBudget.of(executor)  # run.tool_results' full outputs, within the history's bytes

    def run(self, max_turns: int, first_turn: int = 1, leftover: Sequence[ToolCall] = ()) -> AgentRun:
        import openai  # lazy, as everywhere in the toolkit: `import toolkit.agent` stays light

        from ..llm.errors import BadModelReply, describe_model_error

        record, start, self.max_turns = self.run_record, self.clock.now(), max_turns
        record.stopped = "error"
        try:
            if leftover:  # the calls of the turn a pause interrupted
                self._run_tools(first_turn, leftover)
                first_turn += 1
            for turn in range(first_turn, max_turns + 1):
                record.turns = turn
                reply = self._ask_model(turn)
                if not reply.tool_calls:
                    self._finish_with_text(reply)
                    break
                self._run_tools(turn, [parse_tool_call(c) for c in reply.tool_calls])
            else:
                record.stopped = "max_turns"
                record.answer = (f"已达到最多 {max_turns} 轮模型调用，模型仍在请求工具，没有得到最终回答；"
                                 "可以换个问法，或调大 max_turns。")
        except openai.APIError as exc:
            record.stopped, record.error = "error", redact(safe_str(exc, 300))
            record.answer = describe_model_error(exc)
        except BadModelReply as exc:
            record.stopped, record.error = "error", exc.reason
            record.answer = describe_model_error(exc)
        except _EmptyReply as exc:
            record.stopped, record.error = "error", exc.args[0]
            record.answer = f"模型没有返回文本回答（{exc.args[0]}），请重试或换个问法。"
        except Paused as paused:
            turn, calls, pending = paused.args
            record.stopped, record.pending, record.paused = "needs_approval", pending, (self, turn, calls)
            record.answer = f"等待审批：{pending.describe()}。用 resume(run, True) 批准，resume(run, False, 理由) 拒绝。"
            record.duration_ms += (self.clock.now() - start) * 1000.0
            return record
        record.duration_ms += (self.clock.now() - start) * 1000.0
        if record.ok and self.check is not None:
            self._check()
        return record

    def _ask_model(self, turn: int) -> Any:
        """One model call, read field by field; the assistant message joins the conversation.

        Anything the endpoint sends that is not a chat completion (a body that is
        not JSON, choices that are not a list, message null, content that is not
        text, tool_calls that are not calls) raises BadModelReply.
        """
        import openai

        from ..llm.errors import BadModelReply
        from ..llm.reply import read_reply

        began = self.clock.now()
        sent, clear_error = self.run_record.messages, None
        if self.clear is not None:
            sent, clear_error = cleared(self.clear, sent)
        size = context_chars(sent)  # before the reply joins the conversation
        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=sent,
                tools=self.registry.openai_tools(), tool_choice="auto")
        except openai.APIError:
            raise
        except (ValueError, RecursionError) as exc:  # invalid JSON under a JSON content type, nesting too deep
            raise BadModelReply(f"回复无法解析（{type(exc).__name__}）") from None
        except Exception as exc:  # a client object that breaks in its own way (e.g. a student's stand-in)
            raise BadModelReply(f"调用模型时出错（{type(exc).__name__}: {safe_str(exc, 120)}）") from None
        reply = read_reply(response, turn)
        self.run_record.messages.append(redact_value(reply.message()))  # no key kept
        self.run_record.transcript.append({
            "kind": "model", "turn": turn, "content": redact_value(reply.content),
            "tool_calls": [{"id": c["id"], "name": redact_value(c["function"]["name"]),
                            "arguments": redact(safe_str(c["function"]["arguments"], 2000))}
                           for c in reply.tool_calls],
            "finish_reason": reply.finish_reason,
            "duration_ms": (self.clock.now() - began) * 1000.0,
            "context_chars": size,
            **({"clear_error": clear_error} if clear_error else {}),
        })
        return reply

    def _finish_with_text(self, reply: Any) -> None:
        if not (reply.content and reply.content.strip()):
            raise _EmptyReply(f"finish_reason={reply.finish_reason}")
        self.run_record.stopped, self.run_record.answer = "answered", redact(reply.content.strip())

    def _run_batch(self, turn: int, calls: Sequence[ToolCall]) -> None:
        """Run tool calls (repeats refused) and append one tool message per call, in order; the ToolCalls
        (arguments decoded once, where the reply was read) go on to the executor."""
        first = len(self.run_record.tool_results) + 1
        keys = [(c.name, _canonical_arguments(c)) for c in calls]
        results: list[ToolResult | None] = [self._over_limit(call) or self._repeat_of(key, first + i, call)
                                            for i, (key, call) in enumerate(zip(keys, calls))]
        fresh = [i for i, r in enumerate(results) if r is None]
        ran = run_sync(self.executor.run_tool_calls([calls[i] for i in fresh], self.registry))
        for i, result in zip(fresh, ran):
            results[i] = result
            self.seen[keys[i]] = (first + i, result.error_type or "")
            if result.attempts:  # the tool ran: a failure counts, a success resets
                failed = self.failures.setdefault(result.name, [])
                failed[:] = [*failed, str(result.error_code or "错误")] if result.status == "error" else []
        for call, result in zip(calls, results):
            assert result is not None
            self._append_tool_message(turn, call, result)

    def _over_limit(self, call: ToolCall) -> ToolResult | None:
        """A refusal when the call's tool already failed max_tool_failures times in a row, else None."""
        failed = self.failures.get(call.name or "", [])
        if self.max_tool_failures is None or len(failed) < self.max_tool_failures:
            return None
        return ToolResult(call.name or "(unknown)", None,
                          f"工具 {call.name} 已经连续失败 {len(failed)} 次（换了参数也一样，最后一次是 "
                          f"{failed[-1]}），这次不再调用它；请不要再试这个工具，"
                          "直接告诉用户这一步失败了以及原因",
                          error_type=FATAL, error_code=ErrorCode.TOOL_FAILURE_LIMIT, attempts=0, truncated=False,
                          call_id=call.id, started_at=self.clock.now(), args_summary=safe_str(call.arguments, 200))

    def _repeat_of(self, key: tuple[str, str], index: int, call: ToolCall) -> ToolResult | None:
        """A refusal when `key` was called before (and did not fail transiently), else None."""
        earlier = self.seen.get(key)
        if earlier is None or earlier[1] == RETRYABLE:
            self.seen[key] = (index, None)
            return None
        return ToolResult(call.name or "(unknown)", None,
                          f"重复调用：与第 {earlier[0]} 次调用相同（同一工具、同样参数），结果不会改变，"
                          "请换参数或直接根据已有结果回答",
                          error_type=FATAL, error_code=ErrorCode.REPEATED_CALL, attempts=0, truncated=False,
                          call_id=call.id, started_at=self.clock.now(), args_summary=safe_str(call.arguments, 200))

    def _decide(self, result: ToolResult) -> tuple[ToolResult, dict | None]:
        """Run the evaluate plug-in on `result`: (the result as the decision presents it, the decision), the
        decision recorded. A failing plug-in turns the result into a PLUGIN_ERROR for the model (and no decision)."""
        if self.evaluate is None:
            return result, None
        try:
            decision, presented = run_plugin("evaluate", lambda: self._evaluated(result))
        except PluginError as failed:
            why = safe_str(failed.raised, 200) if failed.raised is not None else failed.detail
            self.run_record.decisions.append({"action": "plugin_error", "tool": result.name, "message": why})
            return _plugin_failure(failed, result), None
        self.run_record.decisions.append({"tool": result.name, **decision})
        return presented, decision

    def _evaluated(self, result: ToolResult) -> tuple[dict, ToolResult]:
        """The evaluate plug-in's decision (a plain dict copy), and the result as the loop acts on it."""
        if _takes_next_step(self.evaluate):
            decision = call_plugin(self.evaluate, result, self.run_record.question, next_step=self._step_after())
        else:
            decision = call_plugin(self.evaluate, result, self.run_record.question)
        if not isinstance(decision, dict):
            raise TypeError(f"evaluate 应返回 dict，实际返回了 {type(decision).__name__}")
        decision = dict(decision)
        return decision, apply_decision(result, decision, self.executor.result_max_chars)

    def _step_after(self) -> str | None:
        """The task's step after the one this result answers (None without a context, or at the last step)."""
        ctx = self.ctx
        return ctx.steps[ctx.done + 1] if ctx is not None and ctx.done + 1 < len(ctx.steps) else None

    def _message(self, call_id: str, result: ToolResult, decision: dict | None) -> tuple[dict, ToolResult]:
        """The tool message for `result` and its decision, before the task context goes in front (the
        format_message plug-in's, when it gives a usable one, checked like tool output; the decision is added to
        a plug-in's message too, by toolkit.plugins.plugin_message, so it reaches the model whatever formats it)."""
        if self.format_message is not None:
            budget = self.executor.result_max_chars + MESSAGE_FIELDS_CHARS
            try:
                return run_plugin("format_message", lambda: plugin_message(
                    call_plugin(self.format_message, result.name, call_id, result), call_id, budget,
                    decision_for_model(decision))), result
            except PluginError as failed:
                result, decision = _plugin_failure(failed, result), None
        return format_tool_message(result.name, call_id, result, decision=decision), result

    def _append_tool_message(self, turn: int, call: ToolCall, result: ToolResult) -> None:
        result, decision = self._decide(result)
        if self.ctx is not None and result.ok:
            self.ctx.advance()
        message, result = self._message(call.id or "", result, decision)
        if result.truncated and result.result_id is not None and "read_more" in self.registry:
            message = {**message, "content": with_read_more(message["content"], result)}
        content = message["content"]
        if self.ctx is not None:  # the [TASK_CONTEXT] block goes first; the transcript keeps the context itself
            message = {**message, "content": with_task_context(content, self.ctx)}
        self.run_record.messages.append(message)
        self.outputs.append(self.run_record.tool_results, result)  # its full output within the byte budget
        self.run_record.transcript.append({
            "kind": "tool", "turn": turn, "tool_call_id": call.id, "name": result.name,
            "arguments": safe_str(call.arguments, 500), "status": result.status,
            "error_code": result.error_code, "content": content,
            "task_context": None if self.ctx is None else replace(self.ctx, steps=list(self.ctx.steps)),
            "duration_ms": result.duration_ms,
        })

    def _check(self) -> None:
        record = self.run_record
        try:
            record.check = run_plugin("check", lambda: call_plugin(self.check, record.answer,
                                                                   list(record.tool_results)))
        except PluginError as failed:
            record.check = None
            record.error = f"插件 check 出错：{failed.detail}"


def _canonical_arguments(call: ToolCall) -> str:
    """The same arguments give the same text, whatever their key order or spacing (from the call's
    decoded arguments). Arguments that are not JSON, or nested too deeply to dump, are compared as their text."""
    if call.parse_error is not None:
        return safe_str(call.arguments, 2000)
    try:
        return json.dumps(call.parsed, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return safe_str(call.arguments, 2000)
