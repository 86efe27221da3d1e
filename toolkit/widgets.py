"""Live panels for the classroom (ipywidgets 8): inject faults, run the agent, move a budget, pick a result.

`FailurePanel()` sends a batch of tool calls through a real ToolExecutor with
faults injected at the rates its sliders say, on a simulated clock, and redraws
the retry timeline and the call statistics (toolkit.viz.LiveCharts: the same two
figures, redrawn in place, about a sixth of the cost of drawing them anew: bench row 8). `AgentPanel()` runs
the agent loop with a fault in the sales tool or a misbehaving offline model and
shows the transcript and the answer check. `BudgetPlayground(value)` shows what
smart_truncate / parse_tool_result keep under a budget; `DecisionPicker()` shows
which action evaluate_tool_result picks for a result, and why.

Every panel displays itself (`display(panel)`), shows figures as PNG in an
`ipywidgets.Image` (so JupyterLab, VS Code and a static notebook all show them),
and keeps what it did in plain attributes (`state`, `last_summary`, `executor`,
`figures`, `png`, ...) so tests and instructors can drive it from Python:
set a control's `.value`, call `.run()` / `.reset()`, read the attributes.

Run is synchronous: the batch runs to the end on its own event loop (in a worker
thread when the caller's thread already runs one, as a Jupyter kernel does),
then everything the panel shows is swapped in at once under a lock. A second
Run therefore starts only after the first has finished and drawn; a Reset (or
Run) from another thread while a run is in flight bumps a generation counter,
and the older run's results are dropped instead of drawn. asyncio.run closes
the run's loop, so no task outlives a run.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import html
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import ipywidgets as W

from .clock import SimulatedClock, use_clock
from .decisions import ACTIONS, evaluate_tool_result
from .breaker import CircuitBreaker
from .executor import ToolExecutor
from .registry import Tool, ToolRegistry
from .faults import FAULTS, inject_faults
from .parsing import parse_tool_result
from .shrink import dumps
from .truncate import smart_truncate
from .results import ToolResult, safe_str
from .retry import Backoff, RetryBudget, RetryPolicy

__all__ = ["FailurePanel", "AgentPanel", "BudgetPlayground", "DecisionPicker", "simulate_batch", "colour_key",
           "FAULT_KINDS", "SALES_FAULTS", "MODEL_BEHAVIOURS"]

FAULT_KINDS = ("timeout", "rate_limit", "server_error", "permission", "bad_args", "partial")
JITTER_LABELS = {"full": "全抖动 full", "equal": "等分抖动 equal", "decorrelated": "去相关抖动 decorrelated",
                 "none": "无抖动 none"}  # the words toolkit.viz uses
RETRY_AFTER_S = 2.0           # the Retry-After a simulated 429 carries
BUDGET_CAPACITY = 100         # retry budget when switched on: 20 retries (5 tokens each), 10 timeouts
BREAKER_THRESHOLD, BREAKER_COOLDOWN = 5, 10.0
_FAULT_LABELS = {"rate_limit": "限流 429", "partial": "部分结果"}  # short enough for the slider's label


# --- shared plumbing ----------------------------------------------------------------------------

def _off_the_loop(fn: Callable[[], Any]) -> Any:
    """Call fn() and return its value; from a thread that runs an event loop (a Jupyter
    kernel's button handler), call it in a worker thread with the same context and wait,
    so fn can use asyncio.run and its own clock without touching the kernel's loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, fn).result()


def _code(code: Any) -> str:
    """An error code as plain text (a str Enum member shows its value, not its class name)."""
    return str(getattr(code, "value", code))


def _cell(text: Any, limit: int = 80) -> str:
    return html.escape(" ".join(safe_str(text, limit).split()))


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td style='padding:2px 8px;vertical-align:top'>{_cell(v, 120)}</td>"
                                     for v in row) + "</tr>" for row in rows)
    return f"<table style='border-collapse:collapse;font-size:13px'><tr>{head}</tr>{body}</table>"


class _Panel:
    """What every panel shares: a root widget, a text repr for static notebooks, a run guard."""

    title = ""
    widget: W.Widget

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self.state: dict[str, Any] = {"runs": 0, "running": False, "error": None, "generation": 0}

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self._text()
        return bundle

    def _text(self) -> str:
        return self.title

    def __repr__(self) -> str:
        return self._text()

    def _start(self) -> int:
        with self._lock:
            self._generation += 1
            self.state.update(running=True, generation=self._generation)
            return self._generation

    def _commit(self, generation: int, apply: Callable[[], None]) -> bool:
        """Apply a finished run's results at once, unless a newer Run or a Reset came meanwhile."""
        with self._lock:
            if generation != self._generation:
                self.state["dropped"] = self.state.get("dropped", 0) + 1
                return False
            apply()
            self.state["runs"] += 1
            self.state["running"] = False
            self.state["error"] = None
            return True

    def _fail(self, generation: int, exc: BaseException, message: W.HTML) -> None:
        with self._lock:
            if generation == self._generation:
                self.state["running"] = False
                self.state["error"] = f"{type(exc).__name__}: {safe_str(exc, 300)}"
                message.value = f"<span style='color:#b00'>运行出错：{_cell(self.state['error'], 300)}</span>"

    def _current(self, generation: int) -> bool:
        """Whether `generation` is still the newest run (no Run or Reset came after it)."""
        with self._lock:
            return generation == self._generation

    def _invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self.state.update(running=False, error=None, generation=self._generation)


class _RunPanel(_Panel):
    """A panel with Run and Reset: its text is the last run's one-line summary."""

    last_summary = ""

    def _clear(self) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget the last run (history, figures, summary); a run still in flight is dropped."""
        self._invalidate()
        with self._lock:
            self._clear()

    def _text(self) -> str:
        return f"{self.title}：{self.last_summary}" if self.last_summary else f"{self.title}（尚未运行）"

    def run(self) -> str:
        raise NotImplementedError

    def _clicked_run(self) -> None:
        """The Run button: an error is already shown in the panel and kept in state["error"]."""
        try:
            self.run()
        except Exception:
            pass


def _button(description: str, icon: str, handler: Callable[[], Any], style: str = "") -> W.Button:
    button = W.Button(description=description, icon=icon, button_style=style)
    button.on_click(lambda _: handler())
    return button


# --- the failure-injection panel ---------------------------------------------------------------

async def _lookup_order(order_id: int) -> dict:
    """The panel's default tool: an order lookup that always works (the faults come from outside)."""
    return {"order_id": order_id, "status": "已发货"}


_ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "integer"}},
                 "required": ["order_id"], "additionalProperties": False}


def _scaled(rates: dict[str, float]) -> tuple[dict[str, float], bool]:
    """Rates as given, or scaled down to sum to 1 when they add up to more."""
    total = sum(rates.values())
    if total <= 1:
        return {k: v for k, v in rates.items() if v > 0}, False
    return {k: v / total for k, v in rates.items() if v > 0}, True


def simulate_batch(*, rates: dict[str, float], latency: float = 0.1, calls: int = 50, concurrency: int = 10,
                   max_retries: int = 3, jitter: str = "full", budget: bool = False, breaker: bool = False,
                   seed: int = 0, tool: Callable[..., Any] | None = None) -> dict:
    """Run `calls` tool calls through a ToolExecutor with faults at `rates`, on SimulatedClock(seed).

    Returns {"executor", "results", "tool" (the FaultyTool), "simulated_s", "leftover_tasks",
    "scaled"}. Same arguments, same results. Raises ValueError for an unknown fault or jitter.
    """
    rates, scaled = _scaled(rates)
    policy = RetryPolicy(max_retries=max_retries, backoff=Backoff(jitter=jitter))  # type: ignore[arg-type]

    async def batch() -> dict:
        with use_clock(SimulatedClock(seed=seed)) as clock:
            faulty = inject_faults(tool or _lookup_order, rates=rates, seed=seed, latency=latency,
                                   retry_after=RETRY_AFTER_S)
            registry = ToolRegistry([Tool("lookup_order", faulty, "查询订单状态", _ORDER_SCHEMA, kind="query")])
            executor = ToolExecutor(policy=policy, registry=registry, concurrency=concurrency,
                                    budget=RetryBudget(capacity=BUDGET_CAPACITY) if budget else None,
                                    breaker=CircuitBreaker(BREAKER_THRESHOLD, BREAKER_COOLDOWN) if breaker else None)
            batch_calls = [{"id": f"call_{i}", "type": "function",
                            "function": {"name": "lookup_order", "arguments": f'{{"order_id": {1000 + i}}}'}}
                           for i in range(calls)]
            results = await executor.run_tool_calls(batch_calls)
            leftover = len(asyncio.all_tasks()) - 1
            return {"executor": executor, "results": results, "tool": faulty, "simulated_s": clock.now(),
                    "leftover_tasks": leftover, "scaled": scaled}

    return _off_the_loop(lambda: asyncio.run(batch()))


def colour_key() -> str:
    """The failure panel's colour key as HTML: what each bar colour and line style in its charts means.

    The panel's charts (toolkit.viz.LiveCharts) carry no legend of their own: a key drawn
    into every redraw costs more than the rest of the timeline, and this one never changes.
    """
    from . import viz

    def swatch(color: str, label: str, line: str = "") -> str:
        box = (f"border-top:2px {line} {color};height:0;margin-top:7px" if line else f"background:{color};height:10px")
        return (f"<span style='display:inline-flex;align-items:center;margin-right:12px'>"
                f"<span style='display:inline-block;width:18px;{box};margin-right:4px'></span>"
                f"{html.escape(label)}</span>")

    items = [swatch(viz.OUTCOME_COLORS[k], viz.OUTCOME_LABELS[k]) for k in viz.OUTCOME_COLORS]
    items += [swatch(viz.WAIT_COLOR, "退避等待", "dotted"), swatch(viz.RETRY_AFTER_COLOR, "按 Retry-After 等待", "dashed")]
    return (f"<div style='font-size:12px;line-height:20px'>颜色：{''.join(items)}"
            f"<br>时间线里每一行是一次调用，每一段是一次尝试；统计图里“失败”指最终失败的调用。</div>")


def summarize_batch(batch: dict) -> str:
    """The one Chinese line under the charts: calls, success rate, attempts, simulated seconds."""
    executor, results = batch["executor"], batch["results"]
    summary = executor.get_summary()
    attempts = sum(r.attempts for r in results)
    text = (f"{summary['total_calls']} 次调用，成功率 {summary['success_rate']:.0%}"
            f"（部分结果 {summary['partial']}，失败 {summary['failed']}），共 {attempts} 次尝试，"
            f"模拟耗时 {batch['simulated_s']:.1f} 秒")
    fused = sum(1 for r in results if r.error_code == "CIRCUIT_OPEN")
    if fused:
        text += f"；熔断拦下 {fused} 次"
    if executor.budget is not None and executor.budget.denied:
        text += f"；重试额度拒绝 {executor.budget.denied} 次"
    if batch["scaled"]:
        text += "（故障率合计超过 100%，已按比例缩放）"
    return text


class FailurePanel(_RunPanel):
    """Fault rates, latency, calls, concurrency, retries, jitter, budget, breaker, seed; Run and Reset.

    After `run()`: `executor` (its call_history and get_summary()), `results`,
    `figures` ({"timeline", "stats"} matplotlib Figures of toolkit.viz.LiveCharts: the
    next run redraws the same two in place), `figure` (the timeline),
    `png` (their PNG bytes, also shown in the two Image widgets), `last_summary`
    (the Chinese line) and `state`. `reset()` clears all of them.
    `tool`: the function the faults wrap (default an order lookup that always works).
    """

    title = "故障注入面板"

    def __init__(self, *, calls: int = 50, concurrency: int = 10, max_retries: int = 3, latency: float = 0.1,
                 rates: dict[str, float] | None = None, jitter: str = "full", budget: bool = False,
                 breaker: bool = False, seed: int = 0, tool: Callable[..., Any] | None = None) -> None:
        super().__init__()
        rates = {"timeout": 0.05, "rate_limit": 0.05, "server_error": 0.05, "permission": 0.05,
                 "bad_args": 0.05, "partial": 0.05} if rates is None else rates
        unknown = set(rates) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kind(s) {sorted(unknown)}; choose from {list(FAULT_KINDS)}")
        if jitter not in JITTER_LABELS:
            raise ValueError(f"jitter must be one of {list(JITTER_LABELS)}, got {jitter!r}")
        self.tool = tool
        style = {"description_width": "150px"}
        wide = W.Layout(width="360px")
        self.rate_sliders = {
            kind: W.FloatSlider(value=rates.get(kind, 0.0), min=0.0, max=1.0, step=0.01, readout_format=".0%",
                                description=_FAULT_LABELS.get(kind, FAULTS[kind]), style=style, layout=wide,
                                tooltip=f"{FAULTS[kind]}：每次调用以这个概率出现")
            for kind in FAULT_KINDS}
        self.latency = W.FloatSlider(value=latency, min=0.0, max=2.0, step=0.05, description="每次延迟（秒）",
                                     style=style, layout=wide)
        self.calls = W.IntSlider(value=calls, min=1, max=200, description="调用次数", style=style, layout=wide)
        self.concurrency = W.IntSlider(value=concurrency, min=1, max=50, description="并发上限", style=style,
                                       layout=wide)
        self.max_retries = W.IntSlider(value=max_retries, min=0, max=8, description="最多重试次数", style=style,
                                       layout=wide)
        self.jitter = W.Dropdown(options=[(label, key) for key, label in JITTER_LABELS.items()], value=jitter,
                                 description="退避抖动", style=style, layout=wide)
        self.budget = W.Checkbox(value=budget, description=f"重试预算（{BUDGET_CAPACITY} 令牌）", indent=False)
        self.breaker = W.Checkbox(value=breaker, description=f"熔断器（连续 {BREAKER_THRESHOLD} 次失败）",
                                  indent=False)
        self.seed = W.IntText(value=seed, description="随机种子", style=style, layout=W.Layout(width="240px"))
        self.run_button = _button("运行", "play", self._clicked_run, "primary")
        self.reset_button = _button("重置", "undo", self.reset)
        self.summary = W.HTML(value="尚未运行：调好参数后按“运行”。")
        self.charts = None  # toolkit.viz.LiveCharts, made at the first run: it keeps the figures between runs
        self._draw_lock = threading.Lock()
        self.key = W.HTML(value=colour_key())
        # at their own size (a flex box would stretch them, and blur the text), narrower where the page is
        self.timeline_image = W.Image(format="png", layout=W.Layout(max_width="100%", align_self="flex-start"))
        self.stats_image = W.Image(format="png", layout=W.Layout(max_width="100%", align_self="flex-start"))
        left = W.VBox([W.HTML("<b>故障率</b>"), *self.rate_sliders.values()])
        right = W.VBox([W.HTML("<b>调用与重试</b>"), self.latency, self.calls, self.concurrency, self.max_retries,
                        self.jitter, W.HBox([self.budget, self.breaker]), self.seed])
        self.widget = W.VBox([W.HTML(f"<h3>{self.title}</h3>"), W.HBox([left, right]),
                              W.HBox([self.run_button, self.reset_button]), self.summary, self.key,
                              self.timeline_image, self.stats_image])
        self._clear()

    def settings(self) -> dict:
        """The controls' current values, as simulate_batch's keyword arguments."""
        return {"rates": {kind: s.value for kind, s in self.rate_sliders.items()}, "latency": self.latency.value,
                "calls": self.calls.value, "concurrency": self.concurrency.value,
                "max_retries": self.max_retries.value, "jitter": self.jitter.value, "budget": self.budget.value,
                "breaker": self.breaker.value, "seed": self.seed.value}

    def run(self) -> str:
        """Run the batch with the current settings and redraw; returns the summary line.

        Raises what the simulation or drawing raised (the panel keeps its previous picture);
        the Run button shows such an error in the panel instead.
        """
        generation = self._start()
        self.run_button.disabled = True
        try:
            settings = self.settings()
            batch = simulate_batch(**settings, tool=self.tool)
            text = summarize_batch(batch)

            def apply() -> None:
                self.settings_used = settings
                self.batch, self.executor, self.results = batch, batch["executor"], batch["results"]
                self.figures, self.figure, self.png = figures, figures["timeline"], png
                self.last_summary = text
                self.timeline_image.value, self.stats_image.value = png["timeline"], png["stats"]
                self.summary.value = html.escape(text)
                self.state["leftover_tasks"] = batch["leftover_tasks"]
            # The figures are kept between runs, so drawing and committing happen under one lock, and only for
            # the newest run: an older run that finishes late must not redraw them under a newer one's picture.
            with self._draw_lock:
                if not self._current(generation):
                    self._commit(generation, lambda: None)  # superseded: counted as dropped
                    return text
                if self.charts is None:
                    from .viz import LiveCharts

                    self.charts = LiveCharts()
                png = self.charts.draw(batch["executor"])
                figures = dict(self.charts.figures)
                self._commit(generation, apply)
        except BaseException as exc:
            self._fail(generation, exc, self.summary)
            raise
        finally:
            self.run_button.disabled = False
        return text

    def _clear(self) -> None:
        self.settings_used: dict | None = None
        self.batch: dict | None = None
        self.executor: ToolExecutor | None = None
        self.results: list[ToolResult] = []
        self.figures: dict = {}
        self.figure = None
        self.png: dict[str, bytes] = {}
        self.last_summary = ""
        self.timeline_image.value = b""
        self.stats_image.value = b""
        self.summary.value = "尚未运行：调好参数后按“运行”。"



# --- the agent panel ------------------------------------------------------------------------------

SALES_FAULTS = {
    "none": "无故障",
    "missing_file": "数据文件不存在",
    "bad_row": "CSV 里有一行坏数据",
    "timeouts": "前两次超时，第三次成功",
    "rate_limited": "一直被限流（429）",
}
MODEL_BEHAVIOURS = {
    "": "正常模型（.env 配置的模型，默认离线替身）",
    "ignore-results": "无视工具结果、编造数字",
    "loop": "反复用同样参数调用",
    "unknown-tool": "先调用不存在的工具",
    "bad-arguments": "先发错误的参数",
}
_REFUSED = {"REPEATED_CALL", "UNKNOWN_TOOL", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS_JSON"}
_ROLE = {"model": "模型", "tool": "工具"}
_STATUS = {"success": "成功", "partial": "部分成功", "error": "失败"}
BAD_ROW_FILE = "quantity_abc.csv"


def _project_data() -> Path:
    return Path(__file__).resolve().parent.parent / "data"


@contextlib.contextmanager
def _data_dir_for(fault: str) -> Iterator[None]:
    """TOOLKIT_DATA_DIR pointing at a temporary copy of the data with `fault` in it, for one run."""
    if fault not in ("missing_file", "bad_row"):
        yield
        return
    from .tools import DATA_DIR_ENV, data_dir

    with tempfile.TemporaryDirectory(prefix="toolkit-agent-panel-") as tmp:
        for item in data_dir().iterdir():
            if item.is_file() and item.name != "sales.csv":
                shutil.copy(item, tmp)
        if fault == "bad_row":
            shutil.copy(_project_data() / "faults" / "sales" / BAD_ROW_FILE, Path(tmp) / "sales.csv")
        old = os.environ.get(DATA_DIR_ENV)
        os.environ[DATA_DIR_ENV] = tmp
        try:
            yield
        finally:
            if old is None:
                os.environ.pop(DATA_DIR_ENV, None)
            else:
                os.environ[DATA_DIR_ENV] = old


def _registry_for(fault: str) -> ToolRegistry:
    """The course tools; for "timeouts" / "rate_limited" the sales tool wrapped by inject_faults."""
    from .tools import default_registry

    registry = default_registry()
    plan = {"timeouts": ["timeout", "timeout", "ok"], "rate_limited": ["rate_limit"] * 50}.get(fault)
    if plan is not None:
        sales = registry.get("analyze_sales_csv")
        registry.add(Tool(sales.name, inject_faults(sales.fn, plan, latency=0.2, retry_after=RETRY_AFTER_S),
                          sales.description, sales.parameters, sales.kind, sales.writes, sales.fallback))
    return registry


def _client(behaviour: str) -> tuple[Any, str]:
    from .llm import OFFLINE_MODEL, Settings, make_client

    if not behaviour:
        return make_client()
    return make_client(Settings(None, f"{OFFLINE_MODEL}:{behaviour}", None, True, "AgentPanel 选择的离线变体"))


def transcript_rows(run: Any) -> list[dict]:
    """One row per step of an AgentRun: turn, role, tool, status, attempts, excerpt (Chinese)."""
    from .messages import split_task_context

    rows, results = [], iter(run.tool_results)
    for step in run.transcript:
        if step["kind"] == "model":
            calls = step["tool_calls"]
            rows.append({"turn": step["turn"], "role": "模型", "tool": "、".join(c["name"] for c in calls) or "—",
                         "status": "请求工具" if calls else "回答", "attempts": "",
                         "excerpt": safe_str("；".join(c["arguments"] or "{}" for c in calls) if calls
                                             else step["content"] or "", 120)})
        else:
            result = next(results, None)
            content = split_task_context(step["content"])[1]
            status = _STATUS.get(step["status"], step["status"])
            if step.get("error_code"):
                status += f" {_code(step['error_code'])}"
            rows.append({"turn": step["turn"], "role": "工具", "tool": step["name"], "status": status,
                         "attempts": result.attempts if result is not None else "",
                         "excerpt": safe_str(" ".join(content.split()), 120)})
    return rows


def verdict_for(run: Any) -> Any:
    """check_answer on the answer and the last result of each tool that really ran; None when the
    run gave no answer or no tool ran (nothing to check)."""
    from .verify import check_answer

    if run.stopped != "answered":
        return None
    last: dict[str, ToolResult] = {}
    for result in run.tool_results:
        if result.error_code not in _REFUSED:
            last[result.name] = result
    if not last:
        return None
    first, *more = last.values()
    return check_answer(run.answer, first, *more, question=run.question)


class AgentPanel(_RunPanel):
    """A question, a fault in the sales tool, a model misbehaviour; Run shows transcript and verdict.

    After `run()`: `run_record` (the AgentRun), `rows` (transcript_rows), `verdict`
    (an AnswerCheck, or None when there was no answer to check), `last_summary` and `state`.
    Tools run on a SimulatedClock, so retries and Retry-After waits cost no real time.
    """

    title = "智能体面板"

    def __init__(self, question: str = "哪个类别销售额最高？总销售额是多少？", *, fault: str = "none",
                 behaviour: str = "", max_turns: int = 6, seed: int = 0) -> None:
        super().__init__()
        style = {"description_width": "110px"}
        self.question = W.Text(value=question, description="问题", style=style, layout=W.Layout(width="560px"))
        self.fault = W.Dropdown(options=[(v, k) for k, v in SALES_FAULTS.items()], value=fault,
                                description="销售工具故障", style=style, layout=W.Layout(width="420px"))
        self.behaviour = W.Dropdown(options=[(v, k) for k, v in MODEL_BEHAVIOURS.items()], value=behaviour,
                                    description="模型行为", style=style, layout=W.Layout(width="420px"))
        self.max_turns = W.IntSlider(value=max_turns, min=1, max=10, description="最多轮数", style=style)
        self.seed = seed
        self.run_button = _button("运行", "play", self._clicked_run, "primary")
        self.reset_button = _button("重置", "undo", self.reset)
        self.summary = W.HTML()
        self.transcript = W.HTML()
        self.verdict_html = W.HTML()
        self.widget = W.VBox([W.HTML(f"<h3>{self.title}</h3>"), self.question, self.fault, self.behaviour,
                              self.max_turns, W.HBox([self.run_button, self.reset_button]), self.summary,
                              self.transcript, self.verdict_html])
        self._clear()

    def run(self) -> str:
        """Run the agent once with the current settings; returns the summary line."""
        from .agent import run_agent

        generation = self._start()
        self.run_button.disabled = True
        question, fault, behaviour, turns = (self.question.value, self.fault.value, self.behaviour.value,
                                             self.max_turns.value)

        def go() -> Any:
            client, model = _client(behaviour)
            with _data_dir_for(fault), use_clock(SimulatedClock(seed=self.seed)):
                registry = _registry_for(fault)
                return run_agent(question, client=client, model=model, registry=registry,
                                 executor=ToolExecutor(registry=registry), max_turns=turns)
        try:
            record = _off_the_loop(go)
            rows = transcript_rows(record)
            verdict = verdict_for(record)
        except BaseException as exc:
            self._fail(generation, exc, self.summary)
            raise
        finally:
            self.run_button.disabled = False
        ended = {"answered": "已回答", "max_turns": "达到轮数上限", "error": "模型接口出错"}[record.stopped]
        text = (f"{SALES_FAULTS[fault]} × {MODEL_BEHAVIOURS[behaviour].split('（')[0]}：模型 {record.turns} 轮，"
                f"工具调用 {len(record.tool_results)} 次，{ended}；验收："
                + ("不适用（没有可验收的回答）" if verdict is None else "通过" if verdict.ok else "未通过"))

        def apply() -> None:
            self.run_record, self.rows, self.verdict, self.last_summary = record, rows, verdict, text
            self.summary.value = html.escape(text)
            self.transcript.value = _table(["轮", "角色", "工具", "状态", "尝试", "内容摘录"],
                                           [[r["turn"], r["role"], r["tool"], r["status"], r["attempts"],
                                             r["excerpt"]] for r in rows])
            answer = f"<p><b>回答：</b>{_cell(record.answer, 400)}</p>"
            if verdict is None:
                check = "<p><b>验收：</b>没有可验收的回答（未回答，或没有工具真正运行）。</p>"
            else:
                check = f"<pre style='white-space:pre-wrap'>{html.escape(verdict.report())}</pre>"
            self.verdict_html.value = answer + check
        self._commit(generation, apply)
        return text

    def _clear(self) -> None:
        self.run_record = None
        self.rows: list[dict] = []
        self.verdict = None
        self.last_summary = ""
        self.summary.value = "尚未运行：选好故障和模型行为后按“运行”。"
        self.transcript.value = ""
        self.verdict_html.value = ""



# --- the budget playground --------------------------------------------------------------------------

class BudgetPlayground(_Panel):
    """A budget slider over `value`: what smart_truncate (text) or parse_tool_result keep.

    `result` is the text the model would receive, `state` has method, budget, input and
    output lengths and whether anything was cut. Moving the slider recomputes at once.
    """

    title = "预算游乐场"

    def __init__(self, value: Any, *, budget: int = 800, method: str | None = None) -> None:
        super().__init__()
        self.value = value
        methods = [("parse_tool_result（max_tokens = 预算 ÷ 4）", "parse_tool_result")]
        if isinstance(value, str):
            methods.insert(0, ("smart_truncate（保留开头和结尾）", "smart_truncate"))
        method = method or methods[0][1]
        if method not in [m for _, m in methods]:
            raise ValueError(f"method must be one of {[m for _, m in methods]} for a {type(value).__name__}")
        self.input_text = value if isinstance(value, str) else dumps(value)
        self.budget = W.IntSlider(value=budget, min=40, max=max(4000, budget), step=20, description="预算（字符）",
                                  style={"description_width": "110px"}, layout=W.Layout(width="480px"))
        self.method = W.Dropdown(options=methods, value=method, description="方法",
                                 style={"description_width": "110px"}, layout=W.Layout(width="480px"))
        self.stats = W.HTML()
        self.output = W.HTML()
        self.widget = W.VBox([W.HTML(f"<h3>{self.title}</h3>"), self.budget, self.method, self.stats, self.output])
        self.budget.observe(lambda _: self.update(), names="value")
        self.method.observe(lambda _: self.update(), names="value")
        self.update()

    def update(self) -> str:
        """Recompute for the current slider and method; returns what the model receives."""
        budget, method = self.budget.value, self.method.value
        if method == "smart_truncate":
            result = smart_truncate(self.input_text, budget, keep_head=budget * 6 // 10, keep_tail=budget * 3 // 10)
        else:
            result = parse_tool_result(self.value, max_tokens=max(budget // 4, 1))
        cut = result != self.input_text
        self.result = result
        self.state.update(method=method, budget=budget, input_chars=len(self.input_text),
                          output_chars=len(result), cut=cut)
        self.stats.value = html.escape(
            f"原文 {len(self.input_text):,} 字符 → 模型收到 {len(result):,} 字符（{method}，预算 {budget}）"
            + ("，有删减" if cut else "，原样保留"))
        self.output.value = ("<pre style='white-space:pre-wrap;max-height:260px;overflow:auto;"
                             f"border:1px solid #ccc;padding:4px'>{html.escape(result)}</pre>")
        return result

    def _text(self) -> str:
        s = self.state
        return (f"{self.title}：原文 {s['input_chars']} 字符，{s['method']} 预算 {s['budget']} → "
                f"{s['output_chars']} 字符")


# --- the decision picker ----------------------------------------------------------------------------

ACTION_LABELS = {
    "present_directly": "直接回答", "retry_with_broader_query": "放宽条件再查", "summarize_and_present": "先摘要再回答",
    "retry": "稍后重试", "report_error": "如实报告错误", "present_partial": "先展示部分结果",
}
ACTION_WHY = {
    "present_directly": "成功，数据不为空，也不太长：照结果回答即可。",
    "retry_with_broader_query": "调用成功但数据为空：不是出错，是条件太窄。",
    "summarize_and_present": "成功但结果超过长度上限：先摘要，别把整段塞给模型。",
    "retry": "error_type 是 retryable（超时、限流、5xx）：下一次可能成功。",
    "report_error": "error_type 是 fatal（权限、参数、找不到）：再试一百次结果也一样。",
    "present_partial": "status 是 partial：拿到了一部分，先展示，并说清缺了什么。",
}
assert set(ACTION_LABELS) == set(ACTIONS) == set(ACTION_WHY)


def _example_results() -> dict[str, ToolResult]:
    """Results made the real way: a tool, injected faults, a ToolExecutor, a simulated clock."""
    def orders(city: str = "上海") -> list:
        return [{"order_id": 1000 + i, "city": city, "status": "已发货"} for i in range(3)]

    def nothing() -> list:
        return []

    def many() -> list:
        return [{"order_id": 1000 + i, "city": "上海", "status": "已发货", "note": "备注" * 10} for i in range(400)]

    cases = [
        ("成功，三条订单", orders, []),
        ("成功，但结果为空", nothing, []),
        ("成功，但结果很长（400 条）", many, []),
        ("部分结果", orders, ["partial"]),
        ("一直超时（重试用完）", orders, ["timeout"] * 4),
        ("被限流 429", orders, ["rate_limit"] * 4),
        ("权限不足", orders, ["permission"]),
        ("参数错误", orders, ["bad_args"]),
    ]

    async def build() -> dict[str, ToolResult]:
        with use_clock(SimulatedClock(seed=0)):
            executor = ToolExecutor(max_retries=3, result_max_chars=100_000)
            return {label: await executor.execute(inject_faults(fn, plan, latency=0.1), fn.__name__)
                    for label, fn, plan in cases}
    return _off_the_loop(lambda: asyncio.run(build()))


class DecisionPicker(_Panel):
    """Pick a tool result; see which of evaluate_tool_result's actions it gets, and why.

    `results`: label -> ToolResult (default: eight made through a real executor with
    injected faults). After a pick: `decision` (the dict evaluate_tool_result returned)
    and `state` (label, action).
    """

    title = "决策选择器"

    def __init__(self, results: dict[str, ToolResult] | None = None, *,
                 question: str = "上海有哪些订单已经发货？") -> None:
        super().__init__()
        self.results = results if results is not None else _example_results()
        if not self.results:
            raise ValueError("results must hold at least one ToolResult")
        style = {"description_width": "110px"}
        self.picker = W.Dropdown(options=list(self.results), description="工具结果", style=style,
                                 layout=W.Layout(width="420px"))
        self.question = W.Text(value=question, description="用户问题", style=style, layout=W.Layout(width="420px"))
        self.result_html = W.HTML()
        self.decision_html = W.HTML()
        self.widget = W.VBox([W.HTML(f"<h3>{self.title}</h3>"), self.picker, self.question, self.result_html,
                              self.decision_html])
        self.picker.observe(lambda _: self.update(), names="value")
        self.question.observe(lambda _: self.update(), names="value")
        self.update()

    def pick(self, label: str) -> dict:
        """Select `label` (a key of results) and return the decision."""
        self.picker.value = label
        return self.decision

    def update(self) -> dict:
        label = self.picker.value
        result = self.results[label]
        decision = evaluate_tool_result(result, self.question.value)
        self.decision = decision
        self.state.update(label=label, action=decision["action"])
        shown = [["status", result.status], ["error_type", result.error_type or "—"],
                 ["error_code", result.error_code or "—"], ["attempts", result.attempts],
                 ["data", safe_str(dumps(result.data), 100) if result.data is not None else "—"]]
        if result.error:
            shown.append(["error", result.error])
        self.result_html.value = _table(["字段", "值"], shown)
        action = decision["action"]
        self.decision_html.value = (
            f"<p><b>决策：</b>{html.escape(ACTION_LABELS[action])}（{action}）<br>"
            f"<b>为什么：</b>{html.escape(ACTION_WHY[action])}<br>"
            f"<b>说明：</b>{_cell(decision.get('message'), 200)}<br>"
            f"<b>建议：</b>{_cell(decision.get('suggestion'), 200)}</p>")
        return decision

    def _text(self) -> str:
        return f"{self.title}：{self.state['label']} → {self.state['action']}"
