"""The agent panel: a question, a fault in the sales tool, a model misbehaviour; Run shows transcript and verdict."""
from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as W

from ..clock import SimulatedClock, use_clock
from ..executor import ToolExecutor
from ..results import ToolResult
from ..simulation import SALES_FAULTS, course_tools_with_fault
from .base import MARKS, RunPanel, button, cell, table

__all__ = ["AgentPanel", "answer_check", "MODEL_BEHAVIOURS", "AGENT_SETTINGS"]

AGENT_SETTINGS = ("question", "fault", "behaviour", "max_turns")

MODEL_BEHAVIOURS = {
    "": "正常模型（.env 配置的模型，默认离线替身）",
    "ignore-results": "无视工具结果、编造数字",
    "loop": "反复用同样参数调用",
    "unknown-tool": "先调用不存在的工具",
    "bad-arguments": "先发错误的参数",
}
_MARKS = {"success": MARKS["pass"], "partial": MARKS["warn"], "error": MARKS["fail"]}


def _client(behaviour: str) -> tuple[Any, str]:
    from ..llm import OFFLINE_MODEL, Settings, make_client

    if not behaviour:
        return make_client()
    return make_client(Settings(None, f"{OFFLINE_MODEL}:{behaviour}", None, True, "AgentPanel 选择的离线变体"))


def _shown(row: dict) -> dict:
    """A transcript row (toolkit.agent.record.transcript_rows) as the panel shows it: a tool's status marked."""
    mark = _MARKS.get(row["outcome"])
    return {**row, "status": f"{mark} {row['status']}"} if mark else row


def answer_check(question: str) -> Callable[[str, list[ToolResult]], Any]:
    """run_agent's `check` plug-in the panel uses: check_answer on the answer against the last result of
    each tool that really ran (a call refused before running has no attempt); None when none ran."""
    from ..verify import check_answer

    def check(answer: str, results: list[ToolResult]) -> Any:
        last = {r.name: r for r in results if r.trace}
        if not last:
            return None
        first, *more = last.values()
        return check_answer(answer, first, *more, question=question)
    return check


class AgentPanel(RunPanel):
    """A question, a fault in the sales tool, a model misbehaviour; Run shows transcript and verdict.

    After `run()`: `run_record` (the AgentRun), `rows` (its `rows()`, statuses marked), `verdict`
    (an AnswerCheck: run_record.check; None when there was no answer to check),
    `last_summary` and `state`. Tools run on a SimulatedClock, so retries and Retry-After
    waits cost no real time; a data fault reads a temporary copy of the data
    (toolkit.simulation.course_tools_with_fault), never touching the environment.
    `presets`: {button label: settings from AGENT_SETTINGS}, one button per scene that sets
    every control and runs (see RunPanel); `big`: presentation mode. Raises ValueError for an
    unknown setting, fault or model behaviour in a preset.
    """

    title = "智能体面板"

    def __init__(self, question: str = "哪个类别销售额最高？总销售额是多少？", *, fault: str = "none",
                 behaviour: str = "", max_turns: int = 6, seed: int = 0, presets: dict[str, dict] | None = None,
                 big: bool | None = None) -> None:
        super().__init__(big)
        for name, preset in (presets or {}).items():
            if (preset.get("fault", fault) not in SALES_FAULTS
                    or preset.get("behaviour", behaviour) not in MODEL_BEHAVIOURS):
                raise ValueError(f"preset {name!r}: fault must be one of {list(SALES_FAULTS)} and behaviour one of "
                                 f"{list(MODEL_BEHAVIOURS)}")
        self.question = W.Text(value=question, description="问题")
        self.fault = W.Dropdown(options=[(v, k) for k, v in SALES_FAULTS.items()], value=fault,
                                description="销售工具故障")
        self.behaviour = W.Dropdown(options=[(v, k) for k, v in MODEL_BEHAVIOURS.items()], value=behaviour,
                                    description="模型行为")
        self.max_turns = W.IntSlider(value=max_turns, min=1, max=10, description="最多轮数")
        self._sized([self.question], ("110px", "170px"), ("560px", "min(100%, 860px)"))
        self._sized([self.fault, self.behaviour], ("110px", "170px"), ("420px", "min(100%, 680px)"))
        self._sized([self.max_turns], ("110px", "170px"), ("360px", "520px"))
        self._defaults = {key: getattr(self, key).value for key in AGENT_SETTINGS}
        scenes = self._scenes(presets, AGENT_SETTINGS, [self.question, self.fault, self.behaviour, self.max_turns])
        self.seed = seed
        self.run_button = button("运行", "play", self._clicked_run, "primary")
        self.reset_button = button("重置", "undo", self.reset)
        self.summary = W.HTML()
        self.transcript = W.HTML()
        self.verdict_html = W.HTML()
        self.widget = self._root([*scenes, self.question, self.fault, self.behaviour, self.max_turns,
                                  W.HBox([self.run_button, self.reset_button]), self.summary, self.transcript,
                                  self.verdict_html])
        self._clear()

    def run(self) -> str:
        """Run the agent once with the current settings; returns the summary line."""
        from ..agent import run_agent

        generation = self._start()
        self.run_button.disabled = True
        question, fault, behaviour, turns = (self.question.value, self.fault.value, self.behaviour.value,
                                             self.max_turns.value)
        try:
            client, model = _client(behaviour)
            with course_tools_with_fault(fault) as registry, use_clock(SimulatedClock(seed=self.seed)):
                record = run_agent(question, client=client, model=model, registry=registry,
                                   executor=ToolExecutor(registry=registry), max_turns=turns,
                                   check=answer_check(question))
            rows = [_shown(row) for row in record.rows()]
        except BaseException as exc:  # not a guard: the panel's run boundary marks the run failed, then re-raises
            self._fail(generation, exc, self.summary)
            raise
        finally:
            self.run_button.disabled = False
        verdict = record.check
        ended = {"answered": "已回答", "max_turns": "达到轮数上限", "error": "模型接口出错"}[record.stopped]
        checked = (f"{MARKS['none']} 不适用（没有可验收的回答）" if verdict is None
                   else f"{MARKS['pass']} 通过" if verdict.ok else f"{MARKS['fail']} 未通过")
        text = (f"{SALES_FAULTS[fault]} × {MODEL_BEHAVIOURS[behaviour].split('（')[0]}：模型 {record.turns} 轮，"
                f"工具调用 {len(record.tool_results)} 次，{ended}；验收：{checked}")

        def apply() -> None:
            self.run_record, self.rows, self.verdict, self.last_summary = record, rows, verdict, text
            self._show_summary(text)
            self.transcript.value = table(["轮", "角色", "工具", "状态", "尝试", "内容摘录"],
                                          [[r["turn"], r["role"], r["tool"], r["status"], r["attempts"],
                                            r["excerpt"]] for r in rows], nowrap=(0, 1, 2, 3, 4))
            answer = f"<p><b>回答：</b>{cell(record.answer, 400)}</p>"
            if verdict is None:
                check = f"<p><b>验收：</b>{MARKS['none']} 没有可验收的回答（未回答，或没有工具真正运行）。</p>"
            else:
                check = f"<pre style='white-space:pre-wrap'>{html.escape(verdict.report())}</pre>"
            self.verdict_html.value = answer + check
        self._commit(generation, apply)
        return text

    def _picture(self) -> dict[str, str]:
        return self._html_picture(f"<p>{self.summary.value}</p>", self.transcript.value, self.verdict_html.value)

    def _set_controls(self, settings: dict) -> None:
        for key in AGENT_SETTINGS:
            getattr(self, key).value = settings[key]

    def _clear(self) -> None:
        self.run_record = None
        self.rows: list[dict] = []
        self.verdict = None
        self.last_summary = ""
        self.summary.value = "尚未运行：选好故障和模型行为后按“运行”。"
        self.transcript.value = ""
        self.verdict_html.value = ""
