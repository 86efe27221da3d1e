"""The failure-injection panel: fault rates and retry settings in, a batch through a real executor, two charts out."""
from __future__ import annotations

import base64
import html
import io
import threading
from typing import Any, Callable

import ipywidgets as W

from ..executor import ToolExecutor
from ..faults import FAULTS
from ..results import ErrorCode, ToolResult
from ..simulation import BREAKER_THRESHOLD, BUDGET_CAPACITY, simulate_batch
from .base import RunPanel, button

__all__ = ["FailurePanel", "colour_key", "summarize_batch", "time_axis", "FAULT_KINDS", "SETTINGS", "CHART_PX"]

SETTINGS = ("rates", "latency", "calls", "concurrency", "max_retries", "jitter", "budget", "breaker", "seed")
CHART_PX = 1000  # presentation mode: the widest a chart is shown (a 1920×1080 screen holds the scene buttons and it)

FAULT_KINDS = ("timeout", "rate_limit", "server_error", "permission", "bad_args", "partial")
_FAULT_LABELS = {"rate_limit": "限流 429", "partial": "部分结果"}  # short enough for the slider's label


def colour_key() -> str:
    """The failure panel's colour key as HTML: what each colour, line and mark in its charts means.

    The panel's charts (toolkit.viz.LiveCharts) carry no legend of their own: a key drawn
    into every redraw costs more than the rest of the timeline, and this one never changes.
    """
    from ..viz import style

    def swatch(color: str, label: str, line: str = "", mark: str = "") -> str:
        if mark:
            box = f"color:{color};font-weight:bold;text-align:center;line-height:10px"
        elif line:
            box = f"border-top:2px {line} {color};height:0;margin-top:7px"
        else:
            box = f"background:{color};height:10px"
        return (f"<span style='display:inline-flex;align-items:center;margin-right:12px;white-space:nowrap'>"
                f"<span style='display:inline-block;width:18px;{box};margin-right:4px'>{mark}</span>"
                f"{html.escape(label)}</span>")

    items = [swatch(style.OUTCOME_COLORS[k], style.OUTCOME_LABELS[k]) for k in style.OUTCOME_COLORS]
    items += [swatch(style.NOT_RUN_COLOR, style.NOT_RUN_LABEL),
              swatch("#333333", style.INSTANT_LABEL, mark="\u25cf"),
              swatch(style.NOT_RUN_COLOR, "时间线里：未执行的调用", mark="\u00d7"),
              swatch(style.WAIT_COLOR, "退避等待", "dotted"),
              swatch(style.RETRY_AFTER_COLOR, "按 Retry-After 等待", "dashed")]
    return (f"<div style='font-size:12px;line-height:20px'>颜色：{''.join(items)}"
            "<br>时间线里每一行是一次调用，每一段是一次尝试；统计图里每个工具的条按调用的结局着色。"
            "被熔断器拦下的调用没有执行，不算尝试。</div>")


def time_axis(executor: ToolExecutor) -> float:
    """The timeline's shortest time axis, in seconds: the longest total backoff one call can wait under the
    executor's policy (Backoff.worst_case), so runs that differ only in their jitter share one axis."""
    return executor.policy.backoff.worst_case(executor.policy.max_retries)


def _check_rates(rates: dict[str, float]) -> None:
    unknown = set(rates) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(f"unknown fault kind(s) {sorted(unknown)}; choose from {list(FAULT_KINDS)}")


def summarize_batch(batch: dict) -> str:
    """The one Chinese line under the charts: calls, success rate, attempts, simulated seconds."""
    executor, results = batch["executor"], batch["results"]
    summary = executor.get_summary()
    attempts = sum(r.attempts for r in results)
    text = (f"{summary['total_calls']} 次调用，成功率 {summary['success_rate']:.0%}"
            f"（部分结果 {summary['partial']}，失败 {summary['failed']}），共 {attempts} 次尝试，"
            f"模拟耗时 {batch['simulated_s']:.1f} 秒")
    fused = sum(1 for r in results if r.error_code == ErrorCode.CIRCUIT_OPEN)
    if fused:
        text += f"；熔断拦下 {fused} 次（未执行，不算尝试）"
    if executor.budget is not None and executor.budget.denied:
        text += f"；重试额度拒绝 {executor.budget.denied} 次"
    if batch["scaled"]:
        text += "（故障率合计超过 100%，已按比例缩放）"
    return text


class FailurePanel(RunPanel):
    """Fault rates, latency, calls, concurrency, retries, jitter, budget, breaker, seed; Run and Reset.

    The fault-rate sliders count in percent (0-100: typing "30%" or "30" into a readout sets
    30 %); `rates=` and `settings()["rates"]` are fractions (0.3). `presets`: {button label:
    settings} (keys from SETTINGS; rates left out of a preset's "rates" are 0, settings left
    out are the panel's own): one button per preset sets every control and runs
    (`apply_preset(label)`; `scene_settings(label)` gives simulate_batch the same settings); with
    presets the scene buttons sit right above the summary and the charts, and the controls below the
    charts. `big`: presentation mode (default: toolkit.widgets.presentation), larger text, the charts
    drawn larger as SVG, one at a time (`view`: "timeline" or "stats"); the "大字" toggle switches it.

    After `run()`: `executor` (its call_history and get_summary()), `results`, `events`
    (every ToolEvent of the run), `figures` ({"timeline", "stats"} matplotlib Figures of
    toolkit.viz.LiveCharts: the next run redraws the same two in place), `figure` (the
    timeline), `png` (their PNG bytes, SVG in presentation mode, also shown in the two Image
    widgets), `last_summary` (the Chinese line) and `state` (`state["runs"]`: the summary
    shows "第 N 次运行", so a Run with unchanged settings still shows it ran). `reset()`
    clears all of them. `tool`: the function the faults wrap (default an order lookup that
    always works). Raises ValueError for an unknown fault kind, jitter or preset setting.
    """

    title = "故障注入面板"

    def __init__(self, *, calls: int = 50, concurrency: int = 10, max_retries: int = 3, latency: float = 0.1,
                 rates: dict[str, float] | None = None, jitter: str = "full", budget: bool = False,
                 breaker: bool = False, seed: int = 0, tool: Callable[..., Any] | None = None,
                 presets: dict[str, dict] | None = None, big: bool | None = None) -> None:
        from ..viz.style import JITTER_LABELS

        super().__init__(big)
        rates = {kind: 0.05 for kind in FAULT_KINDS} if rates is None else rates
        _check_rates(rates)
        if jitter not in JITTER_LABELS:
            raise ValueError(f"jitter must be one of {list(JITTER_LABELS)}, got {jitter!r}")
        for preset in (presets or {}).values():
            _check_rates(preset.get("rates", {}))
        self.tool = tool
        self.rate_sliders = {
            kind: W.IntSlider(value=round(rates.get(kind, 0.0) * 100), min=0, max=100, step=1,
                              description=f"{_FAULT_LABELS.get(kind, FAULTS[kind])} %",
                              tooltip=f"{FAULTS[kind]}：每次调用以这个概率出现（百分比，可直接输入 30 或 30%）")
            for kind in FAULT_KINDS}
        self.latency = W.FloatSlider(value=latency, min=0.0, max=2.0, step=0.05, description="每次延迟（秒）")
        self.calls = W.IntSlider(value=calls, min=1, max=200, description="调用次数")
        self.concurrency = W.IntSlider(value=concurrency, min=1, max=50, description="并发上限")
        self.max_retries = W.IntSlider(value=max_retries, min=0, max=8, description="最多重试次数")
        self.jitter = W.Dropdown(options=[(JITTER_LABELS[k], k) for k in ("full", "equal", "decorrelated", "none")],
                                 value=jitter, description="退避抖动")
        self.budget = W.Checkbox(value=budget, description=f"重试预算（{BUDGET_CAPACITY} 令牌）", indent=False)
        self.breaker = W.Checkbox(value=breaker, description=f"熔断器（连续 {BREAKER_THRESHOLD} 次失败）",
                                  indent=False)
        self.seed = W.IntText(value=seed, description="随机种子")
        self._sized([*self.rate_sliders.values(), self.latency, self.calls, self.concurrency, self.max_retries,
                     self.jitter], ("150px", "210px"), ("360px", "520px"))
        self._sized([self.seed], ("150px", "210px"), ("240px", "340px"))
        self._defaults = self.settings()
        scenes = self._scenes(presets, SETTINGS, [*self.rate_sliders.values(), self.latency, self.calls,
                                                  self.concurrency, self.max_retries, self.jitter, self.budget,
                                                  self.breaker, self.seed])
        self.run_button = button("运行", "play", self._clicked_run, "primary")
        self.reset_button = button("重置", "undo", self.reset)
        self.summary = W.HTML(value="尚未运行：调好参数后按“运行”。")
        self.charts = None  # toolkit.viz.LiveCharts, made at the first run: it keeps the figures between runs
        self._draw_lock = threading.Lock()
        self.key = W.HTML(value=colour_key())
        self.key.add_class("trl-key")
        self.timeline_image = W.Image(format="png")
        self.stats_image = W.Image(format="png")
        # presentation mode shows one chart at a time, so a scene's buttons and its chart fit one screen
        self.view = W.ToggleButtons(options=[("重试时间线", "timeline"), ("调用统计", "stats")], value="timeline",
                                    tooltip="投影时一次显示一张图", style={"button_width": "auto"},
                                    layout=W.Layout(margin="0 0 0 24px"))
        self.view.observe(lambda _: self._show_view(), names="value")
        self._resize()
        # the two columns side by side where the page is wide enough, one under the other where it is not
        column = W.Layout(flex="0 0 auto", margin="0 24px 8px 0")
        left = W.VBox([W.HTML("<b>故障率（%）</b>"), *self.rate_sliders.values()], layout=column)
        right = W.VBox([W.HTML("<b>调用与重试</b>"), self.latency, self.calls, self.concurrency, self.max_retries,
                        self.jitter, W.HBox([self.budget, self.breaker], layout=W.Layout(flex_flow="row wrap")),
                        self.seed], layout=column)
        controls = W.HBox([left, right], layout=W.Layout(flex_flow="row wrap"))
        runs = W.HBox([self.run_button, self.reset_button])
        if scenes:  # a scene's button directly above its summary and chart, on one laptop screen (1280×800)
            adjust = W.HTML("<b>手动调整</b>（改完按“运行”；场景按钮已把这些控件设好）")
            scenes[0].children += (self.view,)
            body = [*scenes, self.summary, self.timeline_image, self.stats_image, self.key, adjust, controls, runs]
        else:
            body = [controls, runs, self.summary, self.view, self.key, self.timeline_image, self.stats_image]
        self.widget = self._root(body)
        self._clear()

    def settings(self) -> dict:
        """The controls' current values, as simulate_batch's keyword arguments (rates as fractions)."""
        return {"rates": {kind: s.value / 100 for kind, s in self.rate_sliders.items()},
                "latency": self.latency.value, "calls": self.calls.value, "concurrency": self.concurrency.value,
                "max_retries": self.max_retries.value, "jitter": self.jitter.value, "budget": self.budget.value,
                "breaker": self.breaker.value, "seed": self.seed.value}

    def scene_settings(self, name: str) -> dict:
        """The settings scene `name` runs with, as simulate_batch's keyword arguments: what its button sets the
        controls to (so `simulate_batch(**panel.scene_settings(name))` is the run the button shows). Raises
        KeyError for a scene the panel does not have."""
        preset = {**self._defaults, **self.presets[name]}
        return {**preset, "rates": {kind: round(preset["rates"].get(kind, 0.0) * 100) / 100 for kind in FAULT_KINDS}}

    def _set_controls(self, settings: dict) -> None:
        """A scene's settings on the controls (rates it leaves out are 0)."""
        for kind, slider in self.rate_sliders.items():
            slider.value = round(settings["rates"].get(kind, 0.0) * 100)
        for key in SETTINGS[1:]:
            getattr(self, key).value = settings[key]

    def _picture(self) -> dict[str, str]:
        """The last run's timeline as PNG (a notebook not yet trusted shows no SVG), drawn from the
        presentation-mode figure when the panel shows SVG; nothing before a run."""
        picture = self.png.get("timeline")
        if not picture:
            return {}
        if not picture.startswith(b"\x89PNG"):
            buffer = io.BytesIO()
            self.figure.savefig(buffer, format="png", dpi=120, metadata={"Software": None})
            picture = buffer.getvalue()
        return {"image/png": base64.b64encode(picture).decode("ascii")}

    def _resize(self) -> None:
        """Presentation mode's charts: larger text, drawn as SVG, shown as wide as the panel (up to CHART_PX px),
        one at a time (`view`); the normal ones both, at their own size (stretched, a PNG would blur), narrower
        where the page is."""
        fmt = "svg+xml" if self.big else "png"
        for image in (self.timeline_image, self.stats_image):
            image.layout = (W.Layout(width="100%", max_width=f"{CHART_PX}px", align_self="flex-start") if self.big
                            else W.Layout(max_width="100%", align_self="flex-start"))
            if image.format != fmt:
                image.value, image.format = b"", fmt
        self._show_view()
        with self._draw_lock:
            changed = self.charts is not None and self.charts.big != self.big
            if changed:
                self.charts = None  # made again, at the new sizes, by the next draw
        if changed and getattr(self, "batch", None) is not None:
            self._redraw()

    def _show_view(self) -> None:
        """Presentation mode: only the chart `view` names, and the switch; otherwise both charts, no switch."""
        self.view.layout.display = "" if self.big else "none"
        for name, image in (("timeline", self.timeline_image), ("stats", self.stats_image)):
            image.layout.display = "none" if self.big and self.view.value != name else ""

    def _redraw(self) -> None:
        """Draw the last run again (after a switch of presentation mode) without running it again."""
        with self._draw_lock:
            self.png = self._charts().draw(self.executor, self.events, min_span=time_axis(self.executor))
            self.figures = dict(self.charts.figures)
            self.figure = self.figures["timeline"]
            self.timeline_image.value, self.stats_image.value = self.png["timeline"], self.png["stats"]

    def _charts(self) -> Any:
        """The LiveCharts of the current mode (made at the first draw; call under _draw_lock)."""
        if self.charts is None:
            from ..viz import LiveCharts

            self.charts = LiveCharts(big=self.big, format="svg" if self.big else "png")
        return self.charts

    def run(self) -> str:
        """Run the batch with the current settings and redraw; returns the summary line.

        Raises what the simulation or drawing raised (the panel keeps its previous picture);
        the Run button shows such an error in the panel instead.
        """
        generation = self._start()
        self.run_button.disabled = True
        self.summary.value = f"第 {self.state['runs'] + 1} 次运行：运行中……"
        try:
            settings = self.settings()
            batch = simulate_batch(**settings, tool=self.tool)
            text = summarize_batch(batch)

            def apply() -> None:
                self.settings_used = settings
                self.batch, self.executor, self.results = batch, batch["executor"], batch["results"]
                self.events = batch["events"]
                self.figures, self.figure, self.png = figures, figures["timeline"], png
                self.last_summary = text
                self.timeline_image.value, self.stats_image.value = png["timeline"], png["stats"]
                self._show_summary(text)
                self.state["leftover_tasks"] = batch["leftover_tasks"]
            # The figures are kept between runs, so drawing and committing happen under one lock, and only for
            # the newest run: an older run that finishes late must not redraw them under a newer one's picture.
            with self._draw_lock:
                if not self._current(generation):
                    self._commit(generation, lambda: None)  # superseded: counted as dropped
                    return text
                png = self._charts().draw(batch["executor"], batch["events"], min_span=time_axis(batch["executor"]))
                figures = dict(self.charts.figures)
                self._commit(generation, apply)
        except BaseException as exc:  # not a guard: the panel's run boundary marks the run failed, then re-raises
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
        self.events: list = []
        self.figures: dict = {}
        self.figure = None
        self.png: dict[str, bytes] = {}
        self.last_summary = ""
        self.timeline_image.value = b""
        self.stats_image.value = b""
        self.summary.value = "尚未运行：调好参数后按“运行”。"
