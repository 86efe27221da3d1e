"""The agent loop: the model proposes tool calls, the program runs them, the model answers from the results.

Seed 003's closed loop with seed 004's lessons built in:

    user question -> model -> tool_calls? -> registry + ToolExecutor -> one role "tool"
    message per tool_call_id ([TASK_CONTEXT] first for multi-step tasks) -> model -> ...
    -> a text answer, or a stop at `max_turns`.

One code path: `run_agent` talks to whatever `toolkit.llm.make_client()` returns
(the offline stand-in model on 127.0.0.1, or a real OpenAI-compatible endpoint
configured in .env), always through the openai SDK. Tool failures, unknown tools,
bad arguments and repeated calls reach the model as error tool messages, never as
exceptions. `python -m toolkit.agent "问题"` is the command-line face of the loop.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextvars
import json
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Sequence

from .clock import get_clock
from .executor import ToolExecutor, ToolRegistry, parse_tool_call
from .messages import TaskContext, format_tool_message, split_task_context
from .results import FATAL, RETRYABLE, ToolResult, redact, safe_str
from .safety import redact_value

__all__ = ["SYSTEM_PROMPT", "AgentRun", "run_agent", "split_steps", "task_context_for",
           "describe_model_error", "main"]

SYSTEM_PROMPT = """你是一个资料分析助手，回答问题要有工具给出的证据。
1. 需要具体数字、统计、天气或航班等事实时，先调用提供的工具，不要凭记忆或猜测给出数字。
2. 工具返回的 JSON 是事实的唯一依据：回答里的每个数字都必须能在工具结果里找到。
3. 工具结果的 status 为 error 时，如实告诉用户这一步失败了以及原因，不要编造结果，也不要换个说法假装成功。
4. 如果工具结果前面有 [TASK_CONTEXT]，先看清整个任务还剩哪些步骤，做完所有步骤再回答。
5. 同样的工具和参数不要重复调用，结果不会改变；信息足够时直接用中文回答，说明关键结果。"""

Stopped = Literal["answered", "max_turns", "error"]
REPEAT_CODE = "REPEATED_CALL"
_STOP_WORDS = {"answered": "已回答", "max_turns": "达到轮数上限", "error": "出错"}


# --- task context (seed 004) ---------------------------------------------------------------

# A new step starts at 然后/接着/随后 anywhere, or at 再/并且/另外/同时/之后 after a comma.
_STEP_SPLIT = re.compile(r"[，,；;。！!？?]?\s*(?:然后|接着|随后)|[，,；;。！!？?]\s*(?:再|并且|另外|同时|之后)")
_STEP_TRIM = re.compile(r"^(?:[\s，,；;。！!？?、]|顺便|再|并且)+|[\s，,；;。！!？?、]+$")


def split_steps(question: str) -> list[str]:
    """Split a multi-step request into its steps at 然后 / 接着 / 随后 (anywhere) and
    at 再 / 并且 / 另外 / 同时 / 之后 (after a comma).

    >>> split_steps("帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班")
    ['帮我查一下上海的天气', '查一下今天北京飞上海的航班']

    A question without these words is one step. Raises TypeError for a non-string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a str, got {type(question).__name__}")
    parts = (_STEP_TRIM.sub("", part) for part in _STEP_SPLIT.split(question))
    return [part for part in parts if part]


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
    raise ValueError(f"task_context must be 'auto', True, False or a TaskContext, got {task_context!r}")


# --- the record of a run ----------------------------------------------------------------------

@dataclass
class AgentRun:
    """What one run of the loop leaves behind.

    messages: every message of the conversation (system, user, assistant with its
    tool_calls, tool), the list the model was sent, for notebooks to show.
    transcript: one plain dict per step, {"kind": "model" | "tool", "turn", ...,
    "duration_ms"}, in order. tool_results: one ToolResult per tool_call_id.
    stopped: "answered", "max_turns" (the loop limit) or "error" (the model
    endpoint failed; `error` says why and `answer` says it in Chinese).
    """

    question: str
    answer: str
    stopped: Stopped
    model: str
    turns: int = 0
    messages: list[dict] = field(default_factory=list, repr=False)
    transcript: list[dict] = field(default_factory=list, repr=False)
    tool_results: list[ToolResult] = field(default_factory=list, repr=False)
    task_context: TaskContext | None = field(default=None, repr=False)
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the model gave a final text answer."""
        return self.stopped == "answered"

    @property
    def repeated_calls(self) -> int:
        """How many tool calls the loop refused as repeats."""
        return sum(1 for r in self.tool_results if r.error_code == REPEAT_CODE)

    def summary(self) -> str:
        """A few Chinese lines: question, model, turns, tool calls by status, how it ended, the answer."""
        failed = sum(1 for r in self.tool_results if not r.ok)
        lines = [
            f"问题：{self.question}",
            f"模型：{self.model}；模型调用 {self.turns} 轮，用时 {self.duration_ms:.0f} ms",
            f"工具调用：{len(self.tool_results)} 次（成功 {len(self.tool_results) - failed}，"
            f"失败 {failed}，其中重复被拦下 {self.repeated_calls}）",
            f"结束方式：{_STOP_WORDS.get(self.stopped, self.stopped)}",
            f"回答：{self.answer}",
        ]
        if self.task_context is not None:
            ctx = self.task_context
            lines.insert(3, f"任务进度：{ctx.done}/{len(ctx.steps)} 步（{'；'.join(ctx.steps)}）")
        return "\n".join(lines)

    def render_transcript(self, max_chars: int = 200) -> str:
        """The transcript as readable Chinese lines, each tool result cut to `max_chars`."""
        return "\n".join(_render_step(step, max_chars) for step in self.transcript)

    def __str__(self) -> str:
        return self.summary()


def _render_step(step: dict, max_chars: int) -> str:
    head = f"[第 {step['turn']} 轮]"
    ms = f"{step.get('duration_ms', 0.0):.0f} ms"
    if step["kind"] == "model":
        calls = "，".join(f"{c['name']}({c['arguments']})" for c in step["tool_calls"])
        said = f"请求工具 {calls}" if calls else f"回答：{step['content']}"
        return safe_str(f"{head} 模型（{ms}）：{' '.join(said.split())}", max_chars * 4)
    block, content = split_task_context(step["content"])
    progress = re.search(r"已完成步骤：(\d+/\d+)", block or "")
    note = f"[任务进度 {progress.group(1)}] " if progress else ""
    text = f"{head} 工具 {step['name']} → {step['status']}（{ms}）：{note}{' '.join(content.split())}"
    return safe_str(text, max_chars)


# --- the loop ------------------------------------------------------------------------------

def run_agent(question: str, *, client: Any = None, model: str | None = None,
              registry: ToolRegistry | None = None, executor: ToolExecutor | None = None,
              max_turns: int = 6, task_context: TaskContext | bool | str = "auto",
              system_prompt: str = SYSTEM_PROMPT) -> AgentRun:
    """Answer `question` with the model and the registry's tools; returns an AgentRun.

    client/model: an openai.OpenAI client and the model name; with client None both
    come from `toolkit.llm.make_client()` (offline unless .env / the environment
    configure a real endpoint). registry: the tools offered (default
    `toolkit.tools.default_registry()`, or the executor's own registry when it has
    tools); executor: runs them (default a ToolExecutor over the registry).
    max_turns: the most model calls before stopping with stopped="max_turns".
    task_context: see `task_context_for`; the context advances one step per
    successful tool result and is put before every tool message.

    Never raises for what the model does (unknown tools, bad arguments, repeats,
    failing tools: error tool messages) nor for a failing endpoint (stopped="error").
    Raises ValueError for an empty question, max_turns < 1, a client without a
    model, and toolkit.llm.ConfigError (a ValueError) for a bad .env.
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1:
        raise ValueError(f"max_turns must be an int >= 1, got {max_turns!r}")
    client, model = _client_and_model(client, model)
    if registry is None:
        registry = executor.registry if executor is not None and len(executor.registry) else _default_registry()
    executor = executor if executor is not None else ToolExecutor(registry=registry)
    loop = _Loop(question.strip(), client, model, registry, executor,
                 task_context_for(question, task_context), system_prompt)
    return loop.run(max_turns)


def _client_and_model(client: Any, model: str | None) -> tuple[Any, str]:
    if client is None:
        from .llm import make_client  # the model side loads only when needed

        client, default_model = make_client()
        return client, model or default_model
    if not model:
        raise ValueError("pass model='...' together with client=..., e.g. run_agent(q, client=c, model='qwen-plus')")
    return client, model


def _default_registry() -> ToolRegistry:
    from .tools import default_registry

    return default_registry()


class _EmptyReply(Exception):
    """The model answered with neither text nor tool calls (args[0] says how)."""


class _Loop:
    """One run's state: the conversation, the transcript, the calls seen so far."""

    def __init__(self, question: str, client: Any, model: str, registry: ToolRegistry,
                 executor: ToolExecutor, ctx: TaskContext | None, system_prompt: str) -> None:
        self.client, self.model, self.registry, self.executor, self.ctx = client, model, registry, executor, ctx
        self.clock = get_clock()
        self.run_record = AgentRun(question, "", "error", model, task_context=ctx)
        self.run_record.messages = [{"role": "system", "content": system_prompt},
                                    {"role": "user", "content": question}]
        self.seen: dict[tuple[str, str], tuple[int, ToolResult | None]] = {}

    def run(self, max_turns: int) -> AgentRun:
        import openai  # lazy, as everywhere in the toolkit: `import toolkit.agent` stays light

        record, start = self.run_record, self.clock.now()
        try:
            for turn in range(1, max_turns + 1):
                record.turns = turn
                message = self._ask_model(turn)
                if not message.tool_calls:
                    self._finish_with_text(message)
                    break
                self._run_tools(turn, message.tool_calls)
            else:
                record.stopped = "max_turns"
                record.answer = (f"已达到最多 {max_turns} 轮模型调用，模型仍在请求工具，没有得到最终回答；"
                                 "可以换个问法，或调大 max_turns。")
        except openai.APIError as exc:
            record.stopped, record.error = "error", redact(safe_str(exc, 300))
            record.answer = describe_model_error(exc)
        except _EmptyReply as exc:
            record.stopped, record.error = "error", exc.args[0]
            record.answer = f"模型没有返回文本回答（{exc.args[0]}），请重试或换个问法。"
        record.duration_ms = (self.clock.now() - start) * 1000.0
        return record

    def _ask_model(self, turn: int) -> Any:
        """One model call; the assistant message (with its tool_calls) joins the conversation.

        A tool call without an id gets one ("call_<turn>_<n>") in both the
        conversation and the call, so its tool message can still be matched.
        """
        began = self.clock.now()
        response = self.client.chat.completions.create(
            model=self.model, messages=self.run_record.messages,
            tools=self.registry.openai_tools(), tool_choice="auto")
        if not response.choices:
            raise _EmptyReply("choices 为空")
        choice = response.choices[0]
        message = choice.message
        dumped = redact_value(message.model_dump(exclude_none=True))  # no key kept
        for n, (call, sent) in enumerate(zip(message.tool_calls or [], dumped.get("tool_calls") or []), 1):
            if not call.id:
                call.id = sent["id"] = f"call_{turn}_{n}"
        self.run_record.messages.append(dumped)
        self.run_record.transcript.append({
            "kind": "model", "turn": turn, "content": redact_value(message.content),
            "tool_calls": [{"id": c.id, "name": redact_value(p.name), "arguments": redact_value(p.arguments)}
                           for c, p in ((c, parse_tool_call(c)) for c in message.tool_calls or [])],
            "finish_reason": choice.finish_reason,
            "duration_ms": (self.clock.now() - began) * 1000.0,
        })
        return message

    def _finish_with_text(self, message: Any) -> None:
        if not (message.content and message.content.strip()):
            raise _EmptyReply(f"finish_reason={self.run_record.transcript[-1]['finish_reason']}")
        self.run_record.stopped, self.run_record.answer = "answered", message.content.strip()

    def _run_tools(self, turn: int, tool_calls: Sequence[Any]) -> None:
        """Run a reply's tool calls (repeats refused) and append one tool message per call, in order."""
        calls = [parse_tool_call(c) for c in tool_calls]
        first = len(self.run_record.tool_results) + 1
        keys = [(c.name, _canonical_arguments(c.arguments)) for c in calls]
        results: list[ToolResult | None] = [self._repeat_of(key, first + i, call)
                                            for i, (key, call) in enumerate(zip(keys, calls))]
        fresh = [i for i, r in enumerate(results) if r is None]
        ran = _run_sync(self.executor.run_tool_calls([tool_calls[i] for i in fresh], self.registry))
        for i, result in zip(fresh, ran):
            results[i] = result
            self.seen[keys[i]] = (first + i, result)
        for call, result in zip(calls, results):
            self._append_tool_message(turn, call, result)

    def _repeat_of(self, key: tuple[str, str], index: int, call: Any) -> ToolResult | None:
        """A refusal when `key` was called before (and did not fail transiently), else None."""
        earlier = self.seen.get(key)
        if earlier is None or (earlier[1] is not None and earlier[1].error_type == RETRYABLE):
            self.seen[key] = (index, None)
            return None
        return ToolResult(call.name or "(unknown)", None,
                          f"重复调用：与第 {earlier[0]} 次调用相同（同一工具、同样参数），结果不会改变，"
                          "请换参数或直接根据已有结果回答",
                          error_type=FATAL, error_code=REPEAT_CODE, attempts=0, call_id=call.id,
                          started_at=self.clock.now(), args_summary=safe_str(call.arguments, 200))

    def _append_tool_message(self, turn: int, call: Any, result: ToolResult) -> None:
        if self.ctx is not None and result.ok:
            self.ctx.advance()
        message = format_tool_message(result.name, call.id or "", result, task_context=self.ctx)
        self.run_record.messages.append(message)
        self.run_record.tool_results.append(result)
        self.run_record.transcript.append({
            "kind": "tool", "turn": turn, "tool_call_id": call.id, "name": result.name,
            "arguments": safe_str(call.arguments, 500), "status": result.status,
            "error_code": result.error_code, "content": message["content"],
            "duration_ms": result.duration_ms,
        })


def _canonical_arguments(arguments: Any) -> str:
    """The same arguments give the same text, whatever their key order or spacing."""
    value = arguments
    if isinstance(arguments, str):
        if not arguments.strip():
            value = {}
        else:
            try:
                value = json.loads(arguments)
            except ValueError:
                return arguments
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return safe_str(arguments, 2000)


def _run_sync(coro: Any) -> Any:
    """Run a coroutine to the end from sync code, also inside Jupyter's running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(contextvars.copy_context().run, asyncio.run, coro).result()  # the context keeps use_clock


# --- model endpoint errors, said once in Chinese ----------------------------------------------

def describe_model_error(exc: BaseException) -> str:
    """One Chinese line saying what went wrong with the model endpoint and what to check.

    Covers the openai SDK's connection, timeout and HTTP status errors; the text is
    redacted (no key ever appears) and never raises.
    """
    import openai

    where = _endpoint(exc)
    if isinstance(exc, openai.APITimeoutError):
        text = f"连接模型接口超时{where}：请检查网络，或稍后再试。"
    elif isinstance(exc, openai.APIConnectionError):
        text = f"连不上模型接口{where}：请检查网络和 .env 中的 MODEL_BASE_URL。"
    elif isinstance(exc, openai.AuthenticationError):
        text = "模型接口认证失败（HTTP 401）：API Key 无效或缺失，请检查 .env 中的 OPENAI_API_KEY / DASHSCOPE_API_KEY。"
    elif isinstance(exc, openai.PermissionDeniedError):
        text = "模型接口拒绝访问（HTTP 403）：这个 Key 没有使用该模型或地域的权限，请在控制台检查。"
    elif isinstance(exc, openai.NotFoundError):
        text = "模型接口返回 404：请检查 MODEL_BASE_URL 和 MODEL_NAME 是否正确、是否属于同一地域。"
    elif isinstance(exc, openai.RateLimitError):
        text = "模型接口限流（HTTP 429）：请求太频繁或额度已用完，已自动重试仍失败，请稍后再试。"
    elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        text = f"模型服务内部错误（HTTP {exc.status_code}），已自动重试仍失败，请稍后再试。"
    elif isinstance(exc, openai.APIStatusError):
        text = f"模型接口拒绝了请求（HTTP {exc.status_code}）：{safe_str(exc.message, 200)}"
    else:
        text = f"调用模型失败：{safe_str(exc, 200)}"
    return " ".join(redact(text).split())


def _endpoint(exc: BaseException) -> str:
    try:
        url = exc.request.url  # type: ignore[attr-defined]
        return f"（{url.scheme}://{url.host}{':' + str(url.port) if url.port else ''}）"
    except Exception:
        return ""


# --- the command line ---------------------------------------------------------------------

EMPTY_QUESTION = '问题不能为空：请在命令后写上问题，例如 python -m toolkit.agent "哪个类别销售额最高？"'


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.agent",
        description="让 Agent 调用工具回答问题（没有配置 .env 时使用离线替身模型）。")
    parser.add_argument("question", nargs="*", help="要问的问题；省略时从标准输入读取")
    parser.add_argument("-v", "--verbose", action="store_true", help="在标准错误输出打印每一步（工具调用与结果）")
    parser.add_argument("--max-turns", type=int, default=6, help="最多调用模型几轮（默认 6）")
    return parser


def _read_question(words: list[str]) -> str:
    if words:
        return " ".join(words).strip()
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        return input("请输入问题：").strip()
    return sys.stdin.read().strip()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m toolkit.agent "问题"`: print the answer; 0 answered, 1 failed, 2 bad usage.

    Every failure (configuration, endpoint unreachable, HTTP 401/429/5xx, loop
    limit) is one redacted Chinese line on stderr, without a traceback.
    """
    from .llm import ConfigError

    args = _parser().parse_args(argv)
    try:
        question = _read_question(args.question)
    except (EOFError, KeyboardInterrupt):
        question = ""
    if not question:
        return _fail(EMPTY_QUESTION, 2)
    if args.max_turns < 1:
        return _fail(f"--max-turns 必须至少为 1，收到 {args.max_turns}", 2)
    import openai

    try:
        run = run_agent(question, max_turns=args.max_turns)
    except ConfigError as exc:
        return _fail(f"配置有误：{safe_str(exc, 300)}", 1)
    except openai.OpenAIError as exc:  # raised before the loop, e.g. while building the client
        return _fail(describe_model_error(exc), 1)
    except OSError as exc:  # e.g. the offline model's server cannot open a port on 127.0.0.1
        return _fail(f"无法启动本地的离线模型服务：{safe_str(exc, 200)}", 1)
    except KeyboardInterrupt:
        return _fail("已中断。", 130)
    if args.verbose:
        print(redact(run.render_transcript()), file=sys.stderr)
    if not run.ok:
        return _fail(run.answer, 1)
    print(redact(run.answer))
    return 0


def _fail(message: str, code: int) -> int:
    """Print one redacted line to stderr and return the exit code."""
    print(" ".join(redact(message).split()), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
