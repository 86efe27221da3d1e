"""Chapter 07's own checks: run_my_agent, the loop a student writes around an executor.

`run_my_agent(question, client, model, executor, max_turns=6)` returns (answer, messages): it asks the model, runs
the tool calls it asks for with `executor`, appends one tool message per tool_call_id, and asks again, until a text
answer (answer: the text) or max_turns model calls (answer: None). The chapter's loop writes its messages with the
student's format_message and evaluate (its defaults). Its second step stops running a tool after 3 failures in a
row and tells the model (error code TOOL_FAILURE_LIMIT). The probe hands the function a client whose model is the
offline model here (SDK-like replies) and the toolkit's executor over the scenario's tools, each run and counted
here, so only the loop is judged and what really ran is the referee's record.
"""
from __future__ import annotations

import json
from typing import Any

from ._bridge import Offer
from ._core import Check, Exercise, Fail, play, probe, simulate
from ._plain import describe
from ._remote import Spec

SALES = "哪个类别销售额最高？总销售额是多少？"
WEATHER = "上海今天天气怎么样？"
MODEL_CALLS_LIMIT = 30  # a loop that ignores max_turns is stopped here (and fails its check)


class _Model(Offer):
    """The offline model, asked by the student's client (a stand-in in the worker: client.chat.completions.create,
    _remote._client); every request kept."""

    def __init__(self) -> None:
        self.requests: list[list] = []

    def spec(self, session: Any) -> Spec:
        return Spec("client", (session.offer(self, "model", self.create),))

    def create(self, request: dict) -> dict:
        from ..llm.offline import respond

        if len(self.requests) >= MODEL_CALLS_LIMIT:
            raise RuntimeError(f"模型已经被调用了 {MODEL_CALLS_LIMIT} 次：循环没有在 max_turns 轮后停下")
        body = {"model": request.get("model"), "messages": request.get("messages"), "tools": request.get("tools") or []}
        if request.get("tool_choice") is not None:
            body["tool_choice"] = request["tool_choice"]
        self.requests.append(body["messages"])
        choice = respond(body)["choices"][0]
        message = choice["message"]
        calls = [{"id": c["id"], "type": "function", "function": c["function"]} for c in message.get("tool_calls", [])]
        reply = {"role": "assistant", "content": message.get("content"), "tool_calls": calls or None}
        return {"choices": [{"index": 0, "message": reply, "finish_reason": choice["finish_reason"]}]}


class _Tools(Offer):
    """The scenario's tools as the student's executor (built in the worker: ToolExecutor(max_retries=0) over
    stand-ins): each call runs here, its arguments checked against the tool's schema, and is counted in `runs`."""

    def __init__(self, scenario: str) -> None:
        from ..faults import HTTPStatusError
        from ..registry import ToolRegistry
        from ..tools import default_registry

        self.runs: dict[str, int] = {}
        self.registry = ToolRegistry() if scenario == "failing" else default_registry()
        if scenario == "failing":
            @self.registry.register
            def get_weather(city: str) -> dict:
                """查询某个城市今天的天气。"""
                raise HTTPStatusError(500, "天气服务内部错误")

    def spec(self, session: Any) -> Spec:
        tools = [(Spec("tool", (session.offer(tool, "tool", self.runner(tool)), tool.name, True)), tool.description,
                  tool.parameters, tool.kind) for tool in self.registry]
        return Spec("executor", (0, tools))

    def runner(self, tool: Any) -> Any:
        def run(**kwargs: Any) -> Any:
            arguments, refused = self.registry.check_arguments(tool, kwargs)
            if refused is not None:
                raise ValueError(refused.message)
            self.runs[tool.name] = self.runs.get(tool.name, 0) + 1
            return tool.fn(**arguments)
        return run


SCENARIOS = {"sales": (SALES, "offline-stand-in"), "loop": (SALES, "offline-stand-in:loop"),
             "failing": (WEATHER, "offline-stand-in:change-arguments")}


@probe
def agent_run(fn: Any, *, scenario: str, max_turns: int = 6) -> dict:
    """Probe: run_my_agent on a scenario; what it returned, what the model was sent, what really ran."""
    question, model = SCENARIOS[scenario]
    client, tools = _Model(), _Tools(scenario)

    async def go(clock: Any) -> Any:
        return await play(fn, question, client, model, tools, max_turns=max_turns)

    value, _ = simulate(go)
    pair = isinstance(value, tuple) and len(value) == 2
    answer = value[0] if pair else None
    last = client.requests[-1] if client.requests else []
    return {"pair": pair, "returned": describe(value) if not pair else "",
            "answer": answer if isinstance(answer, str) or answer is None else describe(answer),
            "model_calls": len(client.requests), "runs": tools.runs, "last_request": last}


class Run:
    """What run_my_agent did in one scenario (referee side)."""

    def __init__(self, player: Any, scenario: str, **params: Any) -> None:
        seen = player.run("agent_run", scenario=scenario, **params)
        if not seen["pair"]:
            raise Fail(f"应返回 (answer, messages) 二元组，得到 {seen['returned']}")
        self.answer, self.model_calls, self.runs = seen["answer"], seen["model_calls"], seen["runs"]
        self.sent = seen["last_request"]

    def tool_messages(self) -> list[dict]:
        return [m for m in self.sent if m.get("role") == "tool"]


def check_answers(p: Any) -> None:
    run = Run(p, "sales")
    if not isinstance(run.answer, str) or "9692" not in run.answer or "显示器" not in run.answer:
        raise Fail(f"诚实的模型拿到工具结果后会说出显示器和 9692，你的函数返回的回答是 {run.answer!r}："
                   "工具结果有没有作为 tool 消息追加进 messages、再问一次模型？")
    if run.runs.get("analyze_sales_csv") != 1:
        raise Fail(f"销售工具应真正执行 1 次，实际 {run.runs.get('analyze_sales_csv', 0)} 次")


def check_one_message_per_call(p: Any) -> None:
    run = Run(p, "sales")
    asked = [c.get("id") for m in run.sent if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    answered = [m.get("tool_call_id") for m in run.tool_messages()]
    if not asked:
        raise Fail("最后一次问模型时，messages 里没有带 tool_calls 的 assistant 消息：先把模型的回复追加进 messages")
    if asked != answered:
        raise Fail(f"模型请求的调用 ID 是 {asked}，tool 消息回答的是 {answered}：每个 tool_call_id 要有一条 tool 消息")
    for m in run.tool_messages():
        try:
            content = json.loads(m.get("content") or "")
        except (TypeError, ValueError):
            content = None
        if not isinstance(content, dict) or "status" not in content:
            raise Fail(f"tool 消息的 content 应是带 status 的 JSON（format_tool_message 给的那种），得到 "
                       f"{str(m.get('content'))[:80]!r}")


def check_max_turns(p: Any) -> None:
    run = Run(p, "loop", max_turns=3)
    if run.model_calls != 3:
        raise Fail(f"max_turns=3 时模型最多被调用 3 次，实际 {run.model_calls} 次")
    if run.answer is not None:
        raise Fail(f"到了 max_turns 还没有文字回答时应返回 (None, messages)，得到回答 {run.answer!r}")


def check_failure_limit(p: Any) -> None:
    run = Run(p, "failing", max_turns=8)
    ran = run.runs.get("get_weather", 0)
    if ran != 3:
        raise Fail(f"天气服务一直返回 500，模型每次换个参数再试：工具连续失败 3 次后就不该再执行，实际执行了 {ran} 次")


def check_limit_told(p: Any) -> None:
    run = Run(p, "failing", max_turns=8)
    codes = []
    for m in run.tool_messages():
        try:
            codes.append(json.loads(m.get("content") or "").get("error_code"))
        except (TypeError, ValueError, AttributeError):
            codes.append(None)
    if "TOOL_FAILURE_LIMIT" not in codes:
        raise Fail("被拦下的调用也要有一条 tool 消息告诉模型别再试：用 error_code=\"TOOL_FAILURE_LIMIT\" 的 "
                   f"ToolResult 交给 format_tool_message；模型读到的错误码是 {codes}")
    if not isinstance(run.answer, str) or "失败" not in run.answer:
        raise Fail(f"模型读到“别再试”后会如实说明失败，你的函数返回的回答是 {run.answer!r}")


EXERCISE = Exercise("ch07", "07_sales_agent", "自己写 Agent 循环", "run_my_agent", (
    Check("answers_from_the_tool", "销售问题：工具执行 1 次，回答说出显示器和 9692",
          "把模型的回复和每条 tool 消息都追加进 messages，再问一次模型", check_answers),
    Check("one_tool_message_per_call", "每个 tool_call_id 一条 tool 消息，content 是带 status 的 JSON",
          "for call, result in zip(calls, results): 用 format_message(result.name, call.id, result) 写一条 tool 消息",
          check_one_message_per_call),
    Check("stops_at_max_turns", "模型一直请求工具时，调用 max_turns 次就停下，返回 (None, messages)",
          "for turn in range(max_turns): …；循环结束还没有回答就 return None, messages", check_max_turns),
    Check("failing_tool_stops_after_3", "同一个工具连续失败 3 次（参数换了也算）后不再执行",
          "按工具名记连续失败次数：失败 +1，成功清零；到 3 次就不交给执行器", check_failure_limit),
    Check("limit_is_told_to_the_model", "被拦下的调用也有 tool 消息（错误码 TOOL_FAILURE_LIMIT），模型随后如实说明失败",
          "ToolResult(name, None, \"……不要再试\", error_type=\"fatal\", error_code=\"TOOL_FAILURE_LIMIT\")",
          check_limit_told),
), probes=(agent_run,))
