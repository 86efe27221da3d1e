"""The classroom panels driven from Python, with no browser: set controls, press Run / Reset, read the state.

ipywidgets without a frontend uses a dummy comm: `.value`, observers and
`Button.click()` all run synchronously, so what a student would see is what
these tests read (the executor's history, the figures' artists, the summary).
"""
from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from toolkit import ErrorCode, ToolResult  # noqa: E402
from toolkit.tools import DATA_DIR_ENV  # noqa: E402
from toolkit.widgets import (FAULT_KINDS, AgentPanel, BudgetPlayground, DecisionPicker,  # noqa: E402
                             FailurePanel)

NO_FAULTS = {kind: 0.0 for kind in FAULT_KINDS}


def only(kind: str, rate: float = 1.0) -> dict:
    return {**NO_FAULTS, kind: rate}


def attempts_of(panel: FailurePanel) -> int:
    return sum(r.attempts for r in panel.executor.call_history)


def bar_lengths(fig, gid: str) -> float:
    """Total length of the horizontal bars in the collections with this gid (their rectangles' widths)."""
    return sum(float(p.vertices[:, 0].max() - p.vertices[:, 0].min())
               for ax in fig.axes for c in ax.collections if c.get_gid() == gid for p in c.get_paths())


def timeline_bars(fig) -> int:
    """Attempt bars in toolkit.viz's timeline: the polygons of its "attempts-<outcome>" collections."""
    return sum(len(c.get_paths()) for ax in fig.axes for c in ax.collections
               if (c.get_gid() or "").startswith("attempts-"))


# --- FailurePanel ---------------------------------------------------------------------------------

def test_run_sends_every_call_through_a_real_executor_and_summarizes_it():
    panel = FailurePanel(calls=20, concurrency=5, rates=only("server_error", 0.3), seed=1)
    text = panel.run()

    history = list(panel.executor.call_history)
    assert len(history) == 20 and {r.name for r in history} == {"lookup_order"}
    assert len(panel.batch["tool"].calls) == attempts_of(panel)  # every attempt reached the faulty tool
    summary = panel.executor.get_summary()
    assert text == panel.last_summary
    assert text.startswith("20 次调用，") and f"成功率 {summary['success_rate']:.0%}" in text
    assert f"共 {attempts_of(panel)} 次尝试" in text and attempts_of(panel) > 20
    assert f"模拟耗时 {panel.batch['simulated_s']:.1f} 秒" in text
    assert panel.summary.value == f"<b>第 1 次运行</b>：{text}" and repr(panel) == f"故障注入面板：{text}"


def test_permission_error_is_not_retried_but_server_errors_are():
    panel = FailurePanel(calls=10, rates=only("permission"))
    panel.run()
    assert [r.attempts for r in panel.results] == [1] * 10
    assert {r.error_type for r in panel.results} == {"fatal"} and "成功率 0%" in panel.last_summary

    panel.rate_sliders["permission"].value = 0
    panel.rate_sliders["server_error"].value = 100  # percent
    panel.max_retries.value = 2
    panel.run()
    assert [r.attempts for r in panel.results] == [3] * 10
    assert {r.error_type for r in panel.results} == {"retryable"}


def test_timeline_draws_one_bar_per_attempt():
    panel = FailurePanel(calls=15, rates=only("timeout", 0.4), seed=3)
    panel.run()
    assert attempts_of(panel) > 15  # some calls were retried
    assert panel.figure is panel.figures["timeline"]
    assert timeline_bars(panel.figure) == attempts_of(panel)


def test_same_seed_same_png_and_another_seed_another_picture():
    first, second = FailurePanel(calls=30, seed=7), FailurePanel(calls=30, seed=7)
    first.run()
    second.run()
    assert first.png["timeline"] == second.png["timeline"] and first.png["stats"] == second.png["stats"]
    assert first.png["timeline"].startswith(b"\x89PNG") and first.timeline_image.value == first.png["timeline"]
    assert first.last_summary == second.last_summary

    second.seed.value = 8
    second.run()
    assert second.png["timeline"] != first.png["timeline"]


def test_a_run_with_every_fault_off_draws_a_clean_batch():
    panel = FailurePanel(calls=40, rates=NO_FAULTS)
    panel.run()
    assert attempts_of(panel) == 40 and "成功率 100%" in panel.last_summary


def test_moving_a_fault_slider_changes_the_next_run():
    panel = FailurePanel(calls=40, rates=only("server_error", 0.05), seed=5)
    panel.run()
    before_png, before = panel.png["timeline"], attempts_of(panel)
    assert not any(r.error_code == "RATE_LIMITED" for r in panel.results)

    panel.rate_sliders["rate_limit"].value = 50  # percent
    panel.run()
    assert attempts_of(panel) > before and panel.png["timeline"] != before_png
    waits = [a.wait_after for r in panel.results for a in r.trace if a.error_code == "RATE_LIMITED" and a.wait_after]
    assert waits and min(waits) >= 2.0  # every backoff honoured Retry-After


def test_pressing_run_twice_gives_the_same_picture_and_does_not_pile_up_history():
    panel = FailurePanel(calls=25, seed=2)
    panel.run_button.click()
    png, summary = panel.png["timeline"], panel.last_summary
    panel.run_button.click()

    assert len(panel.executor.call_history) == 25  # a new experiment, not the old one doubled
    assert panel.png["timeline"] == png and panel.last_summary == summary
    assert panel.state["runs"] == 2 and panel.state["running"] is False
    assert panel.state["leftover_tasks"] == 0 and not panel.run_button.disabled


def test_reset_clears_history_figures_images_and_summary():
    panel = FailurePanel(calls=10)
    panel.run()
    panel.reset_button.click()
    assert panel.executor is None and panel.results == [] and panel.figures == {} and panel.png == {}
    assert panel.timeline_image.value == b"" and panel.stats_image.value == b""
    assert panel.last_summary == "" and "尚未运行" in panel.summary.value and repr(panel) == "故障注入面板（尚未运行）"


def blocking_lookup():
    """(tool, started, release): a lookup that signals `started` and then waits for `release` (10 s at most)."""
    started, release = threading.Event(), threading.Event()

    def slow_lookup(order_id: int) -> dict:
        started.set()
        release.wait(10)
        return {"order_id": order_id}
    return slow_lookup, started, release


def test_reset_while_a_run_is_in_flight_drops_that_run_and_leaves_no_thread():
    slow_lookup, started, release = blocking_lookup()
    panel = FailurePanel(calls=5, rates=only("server_error", 0.4), tool=slow_lookup)
    threads_before = threading.active_count()
    worker = threading.Thread(target=panel.run)
    worker.start()
    assert started.wait(10)
    assert panel.state["running"] is True
    panel.reset()  # the instructor presses Reset mid-run
    release.set()
    worker.join(10)

    assert not worker.is_alive() and threading.active_count() == threads_before
    assert panel.state["dropped"] == 1 and panel.state["runs"] == 0
    assert panel.executor is None and panel.png == {} and panel.timeline_image.value == b""
    assert "尚未运行" in panel.summary.value  # not half of the old run's picture


def test_an_older_run_finishing_after_a_newer_one_does_not_redraw_the_kept_figures():
    """The figures live on between runs: a slow first Run that ends after a second Run must leave them alone."""
    slow_lookup, started, release = blocking_lookup()
    panel = FailurePanel(calls=4, rates=NO_FAULTS, tool=slow_lookup)
    first = threading.Thread(target=panel.run)
    first.start()
    assert started.wait(10)
    panel.tool = None  # the second Run uses the default, instant tool, with faults this time
    panel.rate_sliders["server_error"].value = 100
    panel.max_retries.value = 2
    panel.run()
    second_png = dict(panel.png)
    release.set()
    first.join(10)

    assert not first.is_alive() and panel.state["dropped"] == 1 and panel.state["runs"] == 1
    assert panel.png == second_png and attempts_of(panel) == 4 * 3
    assert timeline_bars(panel.charts.figures["timeline"]) == 4 * 3  # still the second run's picture


def test_run_from_inside_a_running_event_loop_works_like_a_jupyter_button():
    plain = FailurePanel(calls=12, seed=4)
    plain.run()
    in_loop = FailurePanel(calls=12, seed=4)

    async def handler() -> str:
        return in_loop.run()  # a kernel's handler: a loop is running in this thread
    assert asyncio.run(handler()) == plain.last_summary
    assert in_loop.png["timeline"] == plain.png["timeline"]


def test_circuit_breaker_makes_later_calls_fail_fast():
    panel = FailurePanel(calls=30, concurrency=1, max_retries=1, rates=only("server_error"), breaker=True)
    panel.run()
    fused = [r for r in panel.results if r.error_code == ErrorCode.CIRCUIT_OPEN]
    assert fused and all(r.attempts == 0 for r in fused)
    assert f"熔断拦下 {len(fused)} 次" in panel.last_summary


def test_the_charts_count_attempts_as_the_summary_does_and_breaker_rejections_apart():
    """86 rejections were once drawn as failed attempts while the summary said "共 34 次尝试"."""
    panel = FailurePanel(calls=120, concurrency=10, rates=only("server_error", 0.9), breaker=True, seed=3)
    panel.run()
    rejected = [r for r in panel.results if r.error_code == ErrorCode.CIRCUIT_OPEN]
    attempts = attempts_of(panel)
    failed = sum(1 for r in panel.results for a in r.trace if a.outcome != "ok")
    assert len(rejected) > 20 and f"共 {attempts} 次尝试" in panel.last_summary
    stats = panel.figures["stats"]
    assert f"共 {attempts} 次尝试" in stats._suptitle.get_text()
    assert f"熔断拦下 {len(rejected)} 次" in stats._suptitle.get_text()
    assert sum(bar_lengths(stats, f"errors-{k}") for k in ("retryable", "timeout", "fatal", "partial")) == failed
    assert bar_lengths(stats, "calls-not_run") == len(rejected)  # counted apart, as calls that never ran
    refused = [ln for ax in stats.axes for ln in ax.lines if ln.get_gid() == "breaker-refused"][0]
    assert len(refused.get_xdata()) == len(rejected)
    opened = [e for e in panel.events if e.kind == "breaker_state" and e.state == "open"]
    assert opened and sum(len(c.get_paths()) for ax in stats.axes for c in ax.collections
                          if c.get_gid() == "breaker-open") == len(opened)
    assert "未执行" in panel.key.value  # the rejections are in the colour key


def test_at_latency_zero_every_attempt_is_still_a_visible_mark():
    panel = FailurePanel(calls=30, concurrency=30, latency=0.0, rates=only("server_error", 0.3), seed=1)
    panel.run()
    timeline = panel.figures["timeline"]
    dots = [c for ax in timeline.axes for c in ax.collections if c.get_gid() == "instant-attempts"][0]
    assert len(dots.get_offsets()) + timeline_bars(timeline) == attempts_of(panel)
    assert len(dots.get_offsets()) == attempts_of(panel)  # every attempt took no time: each is a dot
    limited = [c for ax in timeline.axes for c in ax.collections if c.get_gid() == "retry-after-waits"][0]
    assert limited.get_segments() == []  # nothing drawn in the Retry-After style without a 429
    assert "圆点" in panel.key.value


def test_retry_budget_caps_the_retries_of_a_failing_batch():
    unlimited = FailurePanel(calls=40, rates=only("server_error"))
    unlimited.run()
    budgeted = FailurePanel(calls=40, rates=only("server_error"), budget=True)
    budgeted.run()
    assert attempts_of(budgeted) < attempts_of(unlimited) == 40 * 4
    denied = budgeted.executor.budget.denied
    assert denied > 0 and f"重试额度拒绝 {denied} 次" in budgeted.last_summary


def test_rates_adding_up_to_more_than_one_are_scaled_and_said_so():
    panel = FailurePanel(calls=10, rates={"timeout": 0.8, "permission": 0.8})
    panel.run()
    assert "已按比例缩放" in panel.last_summary
    assert all(call.fault in ("timeout", "permission") for call in panel.batch["tool"].calls)


def test_an_error_while_drawing_is_shown_and_the_old_picture_stays(monkeypatch):
    from toolkit import viz

    panel = FailurePanel(calls=5)
    panel.run()
    png, summary = panel.png["timeline"], panel.last_summary

    def broken(*args, **kwargs):
        raise RuntimeError("画图坏了")
    monkeypatch.setattr(viz.LiveCharts, "draw", broken)
    panel.run_button.click()  # the button never raises into the kernel
    assert "画图坏了" in panel.state["error"] and "运行出错" in panel.summary.value
    assert panel.png["timeline"] == png and panel.last_summary == summary and not panel.state["running"]
    with pytest.raises(RuntimeError):
        panel.run()  # called from Python it does raise


def test_unknown_fault_or_jitter_is_refused():
    with pytest.raises(ValueError, match="unknown fault"):
        FailurePanel(rates={"meteor": 0.1})
    with pytest.raises(ValueError, match="jitter"):
        FailurePanel(jitter="random")


def test_panel_displays_as_a_widget_with_a_text_fallback():
    panel = FailurePanel(calls=3)
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "故障注入面板（尚未运行）"


def test_the_colour_key_beside_the_charts_names_every_colour_they_use():
    """The live charts carry no legend, so the panel's key must name each bar colour and each wait line."""
    from toolkit import viz

    panel = FailurePanel(calls=3)
    assert panel.key in panel.widget.children
    for outcome, colour in viz.OUTCOME_COLORS.items():
        assert f"background:{colour}" in panel.key.value and viz.OUTCOME_LABELS[outcome] in panel.key.value
    assert f"background:{viz.NOT_RUN_COLOR}" in panel.key.value and viz.NOT_RUN_LABEL in panel.key.value
    assert f"dotted {viz.WAIT_COLOR}" in panel.key.value and "退避等待" in panel.key.value
    assert f"dashed {viz.RETRY_AFTER_COLOR}" in panel.key.value and "Retry-After" in panel.key.value


# --- scene presets, typed percentages, run numbers, presentation mode -------------------------------

SCENES = {
    "场景二": {"rates": {"permission": 0.3, "server_error": 0.3}},
    "惊群": {"rates": {"server_error": 0.5}, "latency": 0.0, "calls": 50, "concurrency": 50, "jitter": "none"},
    "熔断": {"rates": {"server_error": 1.0}, "breaker": True},
}


@pytest.fixture
def normal_mode():
    """Presentation mode is notebook-wide state: every test that switches it leaves it off."""
    from toolkit.widgets import presentation

    presentation(False)
    yield
    presentation(False)


def test_a_scene_button_sets_every_control_and_runs():
    panel = FailurePanel(calls=100, concurrency=10, latency=0.1, seed=0, presets=SCENES)
    panel.rate_sliders["timeout"].value = 40  # left over from the last scene: the preset must clear it
    panel.max_retries.value = 1
    panel.preset_buttons["惊群"].click()

    assert panel.state["runs"] == 1 and panel.preset == "惊群"
    assert panel.settings() == {"rates": {**NO_FAULTS, "server_error": 0.5}, "latency": 0.0, "calls": 50,
                                "concurrency": 50, "max_retries": 3, "jitter": "none", "budget": False,
                                "breaker": False, "seed": 0}  # what the scene leaves out is the panel's own
    assert panel.settings_used == panel.settings() and len(panel.executor.call_history) == 50
    assert "<b>第 1 次运行</b>（惊群）：50 次调用" in panel.summary.value
    assert panel.preset_buttons["惊群"].button_style == "info" and panel.preset_buttons["熔断"].button_style == ""

    panel.apply_preset("熔断")
    assert panel.breaker.value and panel.latency.value == 0.1 and panel.calls.value == 100
    assert "熔断拦下" in panel.last_summary and panel.settings_used["rates"]["server_error"] == 1.0
    panel.calls.value = 30  # moved by hand: no longer the scene
    assert panel.preset is None and all(b.button_style == "" for b in panel.preset_buttons.values())


def test_a_control_moved_by_hand_after_a_scene_is_marked_in_the_summary_at_once_and_after_the_next_run():
    panel = FailurePanel(calls=20, seed=0, presets=SCENES)
    panel.apply_preset("场景二")
    scene_summary = panel.summary.value
    assert scene_summary.startswith("<b>第 1 次运行</b>（场景二）：") and not panel.adjusted
    panel.rate_sliders["timeout"].value = 30  # by hand, no Run yet: the charts are still scene two's
    assert panel.preset is None and panel.adjusted
    assert panel.summary.value == ("<b>第 1 次运行</b>（场景二；之后已手动调整，按“运行”更新）："
                                   + panel.last_summary)
    panel.calls.value = 25  # a second move keeps the one mark
    assert panel.summary.value.count("已手动调整") == 1

    panel.run_button.click()
    assert panel.summary.value.startswith("<b>第 2 次运行</b>（已手动调整）：25 次调用")
    assert "场景二" not in panel.summary.value
    panel.apply_preset("惊群")
    assert panel.summary.value.startswith("<b>第 3 次运行</b>（惊群）：") and not panel.adjusted
    panel.reset()
    panel.seed.value = 4  # after Reset there is no run to mark
    assert panel.summary.value == "尚未运行：调好参数后按“运行”。"


def test_a_panel_without_scenes_never_says_it_was_adjusted():
    panel = FailurePanel(calls=10, seed=0)
    panel.run()
    panel.calls.value = 12
    panel.run()
    assert panel.summary.value.startswith("<b>第 2 次运行</b>：12 次调用") and not panel.adjusted


def test_with_scenes_the_buttons_sit_right_above_the_summary_and_the_charts_and_the_controls_below():
    """What a laptop screen holds at once (checked on the page by tests/test_browser.py at 1280×800)."""
    def order(panel: FailurePanel) -> list[str]:
        named = {id(panel.summary): "summary", id(panel.timeline_image): "timeline", id(panel.key): "key",
                 id(panel.stats_image): "stats", id(panel.view): "view"}
        names = []
        for child in panel.widget.children:
            inside = list(getattr(child, "children", ()))
            inside += [w for box in inside for w in getattr(box, "children", ())]
            names.append(named.get(id(child)) or ("scenes" if any(w in panel.preset_buttons.values() for w in inside)
                                                 else "controls" if panel.calls in inside
                                                 else "run" if panel.run_button in inside else None))
        return [n for n in names if n]

    with_scenes = FailurePanel(presets=SCENES)
    assert order(with_scenes) == ["scenes", "summary", "timeline", "stats", "key", "controls", "run"]
    assert with_scenes.view in with_scenes.widget.children[2].children  # the chart switch ends the scene buttons' row
    assert order(FailurePanel()) == ["controls", "run", "summary", "view", "key", "timeline", "stats"]


def test_presentation_mode_shows_one_chart_at_a_time_and_the_switch_picks_it(normal_mode):
    """On a projector a scene's buttons and its chart fit one screen: one chart at a time (tests/test_browser.py
    measures it at 1920×1080); on a laptop both charts, one under the other, and no switch."""
    panel = FailurePanel(calls=20, presets=SCENES)
    shown = lambda: [n for n, image in (("timeline", panel.timeline_image), ("stats", panel.stats_image))  # noqa: E731
                     if image.layout.display != "none"]
    assert shown() == ["timeline", "stats"] and panel.view.layout.display == "none"
    panel.set_big(True)
    assert shown() == ["timeline"] and panel.view.layout.display != "none"
    panel.view.value = "stats"
    assert shown() == ["stats"]
    panel.apply_preset("场景二")  # a scene keeps the chart the room is looking at
    assert shown() == ["stats"] and bytes(panel.stats_image.value).startswith(b"<?xml")
    panel.set_big(False)
    assert shown() == ["timeline", "stats"]


def test_runs_that_differ_only_in_jitter_share_one_time_axis():
    """The time axis reaches at least the longest total backoff one call can wait (Backoff.worst_case): the
    no-jitter and full-jitter runs of one policy are drawn on the same scale, whichever took longer."""
    from toolkit.widgets.failure import time_axis

    herd = {"rates": {"server_error": 0.5}, "latency": 0.0, "calls": 50, "concurrency": 50}
    panel = FailurePanel(presets={"none": {**herd, "jitter": "none"}, "full": {**herd, "jitter": "full"}})
    axes = {}
    for name in ("none", "full"):
        panel.apply_preset(name)
        ends = [a.end for r in panel.results for a in r.trace]
        axes[name] = (panel.figure.axes[0].get_xlim(), max(ends) - min(a.start for r in panel.results for a in r.trace))
    assert axes["none"][0] == axes["full"][0]
    assert axes["full"][1] < axes["none"][1] <= axes["none"][0][1]  # full jitter finished sooner, same axis
    assert time_axis(panel.executor) == 1 + 2 + 4  # three retries: waits of at most 1, 2 and 4 s


def test_a_scene_reproduces_what_the_same_settings_give_by_hand():
    by_scene = FailurePanel(calls=100, seed=0, presets=SCENES)
    by_scene.apply_preset("场景二")
    by_hand = FailurePanel(calls=100, seed=0, rates=only("permission", 0.3) | {"server_error": 0.3})
    by_hand.run()
    assert by_scene.last_summary == by_hand.last_summary and by_scene.png == by_hand.png


def test_a_preset_with_an_unknown_setting_or_fault_is_refused():
    with pytest.raises(ValueError, match="unknown setting"):
        FailurePanel(presets={"x": {"retries": 3}})
    with pytest.raises(ValueError, match="unknown fault"):
        FailurePanel(presets={"x": {"rates": {"meteor": 0.1}}})
    with pytest.raises(KeyError):
        FailurePanel(presets=SCENES).apply_preset("场景九")


# What JupyterLab's slider does with text typed into its readout (@jupyter-widgets/controls, the
# jupyterlab_widgets bundle the course pins): IntSliderView parses it with JavaScript's parseInt,
# FloatSliderView with parseFloat; NaN keeps the old value, a number is clamped to [min, max] and set as is.
_JS_INT = re.compile(r"^\s*([+-]?\d+)")
_JS_FLOAT = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
WIDGETS_BUNDLE = (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter-widgets" / "jupyterlab-manager"
                  / "static")


def js_parse(text: str, integer: bool) -> float:
    """JavaScript's parseInt(text) (integer) or parseFloat(text): the longest number at the start, else NaN."""
    found = (_JS_INT if integer else _JS_FLOAT).match(text)
    return (int if integer else float)(found.group(1)) if found else math.nan


def type_into_readout(slider, text: str) -> None:
    """Type `text` into `slider`'s readout and press Enter, as the browser's slider view handles it."""
    views = {"IntSliderView": True, "FloatSliderView": False}
    assert slider._view_name in views, f"no model of {slider._view_name}'s readout"
    value = js_parse(text, views[slider._view_name])
    if not math.isnan(value):
        slider.value = max(min(value, slider.max), slider.min)


def test_the_readout_model_is_what_the_installed_slider_views_do():
    """type_into_readout follows the front end's code: each view's parse function and its clamp."""
    bundles = [p.read_text(encoding="utf-8", errors="ignore") for p in WIDGETS_BUNDLE.glob("*.js")]
    source = next((b for b in bundles if "IntSliderView:()=>" in b), None)
    if source is None:
        pytest.skip(f"no @jupyter-widgets/controls bundle under {WIDGETS_BUNDLE} (jupyterlab_widgets)")

    def view(name: str) -> str:
        cls = re.search(rf"\b{name}:\(\)=>([\w$]+)", source).group(1)
        return re.search(rf"class {re.escape(cls)} extends ([\w$]+)\{{(.{{0,2000}})", source, re.S)

    int_view, float_view = view("IntSliderView"), view("FloatSliderView")
    base = re.search(rf"class {re.escape(int_view.group(1))} extends [\w$]+\{{constructor\(\)\{{"
                     r"super\(\.\.\.arguments\),this\._parse_value=(\w+)", source)
    assert base and base.group(1) == "parseInt"
    assert "this._parse_value=parseFloat" in float_view.group(2)[:200]
    text_change = int_view.group(2)[int_view.group(2).index("handleTextChange"):][:400]
    assert "isNaN(" in text_change and "Math.max(Math.min(" in text_change
    assert [js_parse(t, True) for t in ("30%", " 30", "12.5%", "+7")] == [30, 30, 12, 7]
    assert [js_parse(t, False) for t in ("30%", ".5", "1e2x")] == [30.0, 0.5, 100.0]
    assert math.isnan(js_parse("%30", True)) and math.isnan(js_parse("abc", False))


def test_fault_rates_are_whole_percents_so_a_typed_30_percent_is_30_percent():
    """Typed into a fault rate's readout, "30%" and "30" are 30 %. On the old 0-1 FloatSlider (shown as a
    percentage) both were parseFloat'ed to 30 and clamped to 1: 100 %."""
    panel = FailurePanel(rates={"timeout": 0.05, "partial": 0.333})
    for slider in panel.rate_sliders.values():
        assert "%" not in slider.readout_format and slider.description.endswith("%")
    assert panel.rate_sliders["timeout"].value == 5 and panel.rate_sliders["partial"].value == 33
    typed = {"30%": 0.3, "30": 0.3, " 45 %": 0.45, "12.5%": 0.12, "150%": 1.0, "-5": 0.0, "abc": 0.05}
    for text, rate in typed.items():
        panel.rate_sliders["timeout"].value = 5
        type_into_readout(panel.rate_sliders["timeout"], text)
        assert panel.settings()["rates"]["timeout"] == pytest.approx(rate), text
    type_into_readout(panel.rate_sliders["partial"], "30%")
    assert panel.settings()["rates"]["partial"] == pytest.approx(0.3)


def test_a_run_with_unchanged_settings_still_shows_that_it_ran():
    panel = FailurePanel(calls=10, seed=1)
    panel.run_button.click()
    first = panel.summary.value
    panel.run_button.click()
    assert panel.last_summary in first and first.startswith("<b>第 1 次运行</b>")
    assert panel.summary.value == first.replace("第 1 次运行", "第 2 次运行")


def test_presentation_mode_draws_chart_text_of_16_px_where_the_panel_is_800_px_wide(normal_mode):
    from toolkit.viz.style import BIG_WIDTH, smallest_text_pt
    from toolkit.widgets import BIG_TEXT_PX

    normal = FailurePanel(calls=100, rates=only("server_error", 1.0), breaker=True, budget=True)
    big = FailurePanel(calls=100, rates=only("server_error", 1.0), breaker=True, budget=True, big=True)
    normal.run()
    big.run()
    assert normal.png["timeline"].startswith(b"\x89PNG") and big.png["timeline"].startswith(b"<?xml")
    assert big.timeline_image.format == "svg+xml" and big.stats_image.value == big.png["stats"]
    assert big.timeline_image.layout.width == "100%"  # an SVG is drawn at the width it is shown
    for name, fig in big.figures.items():
        assert fig.get_size_inches()[0] == BIG_WIDTH
        px = smallest_text_pt(fig) / 72 * 800 / BIG_WIDTH
        assert px >= 16, (name, px)
        assert smallest_text_pt(fig) > smallest_text_pt(normal.figures[name])
    assert "trl-big" in big.widget._dom_classes and "trl-big" not in normal.widget._dom_classes
    assert f"--jp-widgets-font-size: {BIG_TEXT_PX}px" in big.widget.children[0].value and BIG_TEXT_PX >= 18
    assert int(big.rate_sliders["timeout"].layout.width[:-2]) > int(normal.rate_sliders["timeout"].layout.width[:-2])


def test_presentation_switches_every_panel_and_redraws_without_running(normal_mode):
    from toolkit.widgets import presentation

    panel, agent = FailurePanel(calls=10), AgentPanel()
    panel.run()
    presentation(True)
    assert panel.big and agent.big and panel.big_toggle.value and "trl-big" in agent.widget._dom_classes
    assert panel.png["timeline"].startswith(b"<?xml") and panel.state["runs"] == 1  # redrawn, not run again
    assert FailurePanel().big and DecisionPicker().big  # made after: in presentation mode too
    from toolkit.widgets import Reveal
    assert "trl-big" in Reveal("答案").widget._dom_classes

    panel.big_toggle.value = False  # the panel's own toggle switches it alone
    assert not panel.big and panel.png["timeline"].startswith(b"\x89PNG") and agent.big
    assert panel.timeline_image.format == "png"


def test_before_run_all_a_panel_shows_a_picture_not_one_line(normal_mode, offline):
    panel = FailurePanel(calls=10)
    assert set(panel._repr_mimebundle_()) == {"application/vnd.jupyter.widget-view+json", "text/plain"}
    panel.run()
    assert base64.b64decode(panel._repr_mimebundle_()["image/png"]) == panel.png["timeline"]
    panel.set_big(True)  # shown as SVG; the picture stays PNG, which a notebook not yet trusted still shows
    assert base64.b64decode(panel._repr_mimebundle_()["image/png"]).startswith(b"\x89PNG")
    agent = AgentPanel(fault="timeouts")
    agent.run()
    shown = agent._repr_mimebundle_()["text/html"]
    assert "<table" in shown and "第 1 次运行" in shown and "回答" in shown


def test_an_answer_behind_reveal_is_nowhere_until_asked():
    from toolkit.widgets import Reveal

    answer = Reveal("权限不足：出现 36 次，之后又重试了 0 次", "显示备查：场景二")
    bundle = answer._repr_mimebundle_()
    assert "出现 36 次" not in str(bundle) and answer.output.outputs == () and not answer.shown
    answer.button.click()
    assert answer.shown and answer.output.outputs[0]["text"] == "权限不足：出现 36 次，之后又重试了 0 次\n"
    answer.button.click()
    assert not answer.shown and answer.output.outputs == () and answer.button.description == "显示备查：场景二"
    # as wide as its whole label (a fixed-width button showed "显示备查…"; tests/test_browser.py looks at it)
    assert answer.button.layout.width == "auto" and answer.button.layout.align_self == "flex-start"


# --- AgentPanel -----------------------------------------------------------------------------------

@pytest.fixture
def offline(monkeypatch):
    for name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "OPENAI_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLKIT_DOTENV", "none")
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


def tool_rows(panel: AgentPanel) -> list[dict]:
    return [r for r in panel.rows if r["role"] == "工具"]


def test_agent_panel_honest_run_shows_the_transcript_and_passes_the_check(offline):
    panel = AgentPanel()
    panel.run()
    assert panel.run_record.stopped == "answered" and "9692" in panel.run_record.answer
    assert [r["role"] for r in panel.rows] == ["模型", "工具", "模型"]
    assert tool_rows(panel)[0]["tool"] == "analyze_sales_csv" and tool_rows(panel)[0]["status"] == "✔ 成功"
    assert "4495" in tool_rows(panel)[0]["excerpt"]  # what the model read of the data, from the ToolResult
    assert panel.verdict is panel.run_record.check and panel.verdict.ok and "验收：✔ 通过" in panel.last_summary
    assert "<table" in panel.transcript.value and "内容摘录" in panel.transcript.value
    assert "white-space:nowrap" in panel.transcript.value  # 轮, 角色 and 尝试 never break one character per line
    assert panel.transcript.value.count("white-space:nowrap") == 5 * (1 + len(panel.rows))  # only 内容摘录 wraps


def test_two_timeouts_then_ok_takes_three_attempts_on_the_simulated_clock(offline):
    panel = AgentPanel(fault="timeouts")
    panel.run()
    (row,) = tool_rows(panel)
    assert row["attempts"] == 3 and row["status"] == "✔ 成功" and panel.verdict.ok


def test_rate_limited_sales_tool_is_retried_then_reported_without_real_waiting(offline):
    panel = AgentPanel(fault="rate_limited")
    t0 = time.perf_counter()
    panel.run()
    assert time.perf_counter() - t0 < 5  # three Retry-After waits of 2 s happen on the simulated clock
    (result,) = panel.run_record.tool_results
    assert result.attempts == 4 and result.error_code == "RATE_LIMITED"
    assert panel.verdict.ok and panel.verdict.tool_failed  # the answer admits the failure


@pytest.mark.parametrize("fault, code", [("missing_file", "FILE_NOT_FOUND"), ("bad_row", "INVALID_SALES_CSV")])
def test_data_faults_reach_the_model_and_the_data_dir_is_restored(offline, fault, code):
    panel = AgentPanel(fault=fault)
    panel.run()
    assert tool_rows(panel)[0]["status"] == f"✘ 失败 {code}"
    assert "9692" not in panel.run_record.answer and panel.verdict.ok and panel.verdict.tool_failed
    assert DATA_DIR_ENV not in os.environ


def test_data_faults_read_a_copy_of_the_data_without_touching_the_environment(offline, monkeypatch, tmp_path):
    """The panel points its registry at a temporary copy (default_registry(data_dir=...)): a data folder set
    in the environment stays as it was, during the run and after, and the fault still shows."""
    import shutil

    from toolkit.tools import data_dir

    for item in data_dir().iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    panel = AgentPanel(fault="missing_file")
    panel.run()  # the environment's folder has sales.csv: only the panel's own copy lacks it
    assert tool_rows(panel)[0]["status"] == "✘ 失败 FILE_NOT_FOUND"
    assert os.environ[DATA_DIR_ENV] == str(tmp_path) and (tmp_path / "sales.csv").exists()
    panel.fault.value = "none"
    panel.run()  # the same environment, no fault: the panel's copy is gone, the real data answers
    assert tool_rows(panel)[0]["status"] == "✔ 成功" and panel.verdict.ok


def test_model_that_ignores_results_fails_the_answer_check(offline):
    panel = AgentPanel(behaviour="ignore-results")
    panel.run()
    assert panel.run_record.tool_results[0].ok
    assert panel.verdict is not None and not panel.verdict.ok and "验收：✘ 未通过" in panel.last_summary
    assert "未通过验收" in panel.verdict_html.value


def test_looping_model_stops_at_max_turns_and_is_not_checked(offline):
    panel = AgentPanel(behaviour="loop")
    panel.max_turns.value = 3
    panel.run()
    assert panel.run_record.stopped == "max_turns" and panel.verdict is None
    assert [r["status"] for r in tool_rows(panel)] == ["✔ 成功", "✘ 失败 REPEATED_CALL", "✘ 失败 REPEATED_CALL"]
    assert "验收：○ 不适用" in panel.last_summary


@pytest.mark.parametrize("behaviour, first_code", [("unknown-tool", "UNKNOWN_TOOL"),
                                                   ("bad-arguments", "INVALID_ARGUMENTS_JSON")])
def test_misbehaving_model_gets_errors_then_an_answer_that_passes(offline, behaviour, first_code):
    panel = AgentPanel(behaviour=behaviour)
    panel.run()
    assert tool_rows(panel)[0]["status"] == f"✘ 失败 {first_code}" and tool_rows(panel)[0]["attempts"] == 0
    assert panel.run_record.stopped == "answered" and panel.verdict.ok  # refused calls are not "checked"


def test_agent_panel_run_twice_gives_the_same_transcript_not_a_longer_one(offline):
    panel = AgentPanel(fault="timeouts")
    panel.run_button.click()
    rows, summary = panel.rows, panel.last_summary
    panel.run_button.click()
    assert panel.rows == rows and panel.last_summary == summary and len(panel.run_record.tool_results) == 1
    assert panel.state["runs"] == 2 and not panel.state["running"] and not panel.run_button.disabled


def test_agent_scene_buttons_set_fault_and_behaviour_and_run(offline):
    scenes = {"超时": {"fault": "timeouts"}, "编造": {"fault": "none", "behaviour": "ignore-results"}}
    panel = AgentPanel(fault="bad_row", max_turns=4, presets=scenes)
    panel.preset_buttons["编造"].click()
    assert (panel.fault.value, panel.behaviour.value, panel.max_turns.value) == ("none", "ignore-results", 4)
    assert not panel.verdict.ok and "<b>第 1 次运行</b>（编造）：" in panel.summary.value

    panel.apply_preset("超时")  # what the scene leaves out is the panel's own, not the last scene's
    assert (panel.fault.value, panel.behaviour.value) == ("timeouts", "") and panel.verdict.ok
    assert tool_rows(panel)[0]["attempts"] == 3 and "第 2 次运行</b>（超时）" in panel.summary.value
    panel.max_turns.value = 5  # by hand: the summary stops naming the scene as the controls' state
    assert "（超时；之后已手动调整，按“运行”更新）" in panel.summary.value
    panel.run()
    assert "第 3 次运行</b>（已手动调整）" in panel.summary.value
    with pytest.raises(ValueError, match="fault"):
        AgentPanel(presets={"x": {"fault": "meteor"}})
    with pytest.raises(ValueError, match="unknown setting"):
        AgentPanel(presets={"x": {"seed": 3}})


def test_agent_panel_reset_forgets_the_run(offline):
    panel = AgentPanel()
    panel.run()
    panel.reset_button.click()
    assert panel.run_record is None and panel.rows == [] and panel.verdict is None
    assert panel.transcript.value == "" and repr(panel) == "智能体面板（尚未运行）"


# --- BudgetPlayground and DecisionPicker -------------------------------------------------------------

LONG_TEXT = "".join(f"第 {i} 行：销售记录，金额 {i * 7}。\n" for i in range(400))


def test_budget_slider_cuts_long_text_and_keeps_head_and_tail():
    playground = BudgetPlayground(LONG_TEXT, budget=600)
    assert playground.state["method"] == "smart_truncate" and playground.state["cut"]
    assert playground.result.startswith("第 0 行") and playground.result.rstrip().endswith("金额 2793。")
    size_600 = len(playground.result)

    playground.budget.value = 200
    assert playground.state["budget"] == 200 and len(playground.result) < size_600 <= 600
    assert "200" in playground.stats.value and repr(playground).endswith(f"→ {len(playground.result)} 字符")


def test_budget_large_enough_leaves_text_unchanged():
    playground = BudgetPlayground("短文本", budget=100)
    assert playground.result == "短文本" and not playground.state["cut"] and "原样保留" in playground.stats.value


def test_the_budget_slider_reaches_a_budget_that_keeps_a_long_text_whole():
    """A 10,000-character log under the slider: dragged all the way right it is kept as it is (chapter 09's
    scene six shows both a cut and no cut)."""
    log = "".join(f"第 {i} 行：订单 {1000 + i}，金额 {i * 7} 元。\n" for i in range(400))
    playground = BudgetPlayground(log, budget=800)
    assert len(log) > 4000 and playground.state["cut"]
    playground.budget.value = playground.budget.max
    assert playground.result == log and not playground.state["cut"] and "原样保留" in playground.stats.value


BUDGET_TEXTS = {
    "lines": LONG_TEXT,
    "one long line": "没有换行的一大段文字" * 2000,
    "ascii": "".join(f"row {i}: ok\n" for i in range(5000)),
    "huge": "x" * 1_200_000,
}


@pytest.mark.parametrize("name", BUDGET_TEXTS)
def test_what_the_playground_shows_fits_the_budget_it_shows_marker_included(name):
    """Exercise 02 teaches that the marker counts: at every budget the text shown is within it."""
    text = BUDGET_TEXTS[name]
    playground = BudgetPlayground(text, budget=40)
    for budget in range(playground.budget.min, playground.budget.max + 1, playground.budget.step):
        playground.budget.value = budget
        assert len(playground.result) <= budget, (name, budget, len(playground.result))
        assert playground.state["output_chars"] == len(playground.result) and f"预算 {budget}" in playground.stats.value
        assert "✔" in playground.stats.value
    playground.budget.value = 40
    assert "已省略" in playground.result and len(playground.result) <= 40


def test_budget_playground_on_records_keeps_within_the_budget_too():
    records = [{"id": i, "city": "上海", "amount": i * 10} for i in range(500)]
    playground = BudgetPlayground(records, budget=40)
    for budget in range(40, 4001, 120):
        playground.budget.value = budget
        assert len(playground.result) <= budget, (budget, len(playground.result))


def test_budget_playground_on_records_uses_parse_tool_result_only():
    records = [{"id": i, "city": "上海", "amount": i * 10} for i in range(500)]
    playground = BudgetPlayground(records, budget=400)
    assert [value for _, value in playground.method.options] == ["parse_tool_result"]
    assert playground.state["output_chars"] < playground.state["input_chars"]
    with pytest.raises(ValueError, match="method"):
        BudgetPlayground(records, method="smart_truncate")


def test_decision_picker_shows_the_action_each_real_result_gets():
    picker = DecisionPicker()
    actions = {label: picker.pick(label)["action"] for label in picker.results}
    assert actions == {
        "成功，三条订单": "present_directly", "成功，但结果为空": "retry_with_broader_query",
        "成功，但结果很长（400 条）": "summarize_and_present", "部分结果": "present_partial",
        "一直超时（重试用完）": "retry", "被限流 429": "retry", "权限不足": "report_error",
        "参数错误": "report_error",
    }
    assert picker.results["权限不足"].attempts == 1 and picker.results["一直超时（重试用完）"].attempts == 4


def test_decision_picker_explains_why_and_follows_the_picker():
    picker = DecisionPicker()
    picker.picker.value = "权限不足"
    assert picker.state == {**picker.state, "label": "权限不足", "action": "report_error"}
    assert "fatal" in picker.decision_html.value and "如实报告错误" in picker.decision_html.value
    assert repr(picker) == "决策选择器：权限不足 → report_error"


def test_decision_picker_takes_its_own_results():
    picker = DecisionPicker({"空列表": ToolResult("search", [])})
    assert picker.decision["action"] == "retry_with_broader_query"
    with pytest.raises(ValueError):
        DecisionPicker({})


def test_on_a_projector_the_breakers_refused_calls_are_distinct_marks_in_rows_a_room_can_read(normal_mode):
    """A run with the breaker refusing most calls, in presentation mode: each refused call a mark in a row of
    its own, rows at least 20 px apart and marks not touching where the chart is shown CHART_PX wide."""
    from toolkit.viz.live import BIG_ROWS
    from toolkit.widgets.failure import CHART_PX

    panel = FailurePanel(calls=100, seed=0, presets={"熔断": SCENES["熔断"]}, big=True)
    panel.apply_preset("熔断")
    refused = [r for r in panel.results if not r.trace]
    assert len(refused) > 50
    fig = panel.figures["timeline"]
    ax = fig.axes[0]
    marks = [ln for ln in ax.lines if ln.get_gid() == "not-run"][0]
    ys = list(marks.get_ydata())
    assert ys and len(set(ys)) == len(ys)  # one mark per row
    px_per_inch = CHART_PX / fig.get_size_inches()[0]
    row_px = ax.get_position().height * fig.get_size_inches()[1] * px_per_inch / BIG_ROWS
    mark_px = marks.get_markersize() / 72 * px_per_inch
    assert row_px >= 20 and row_px > 1.5 * mark_px, (row_px, mark_px)


# --- chapter 09: what each scene's script says is what its run shows ----------------------------------------

NOTEBOOK_09 = Path(__file__).resolve().parent.parent / "notebooks" / "09_instructor_demo.ipynb"


def _chapter_09() -> tuple[str, list[str]]:
    """Chapter 09's Markdown (one text) and its code cells."""
    cells = json.loads(NOTEBOOK_09.read_text(encoding="utf-8"))["cells"]
    return ("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"),
            ["".join(c["source"]) for c in cells if c["cell_type"] == "code"])


def _cell_made(codes: list[str], marker: str, **names) -> dict:
    """Run the chapter's code cell holding `marker` (its own scenes and constructor) and return its names."""
    space = dict(names)
    exec(next(code for code in codes if marker in code), space)  # noqa: S102 (the course's own notebook)
    return space


@pytest.fixture(scope="module")
def scene_runs() -> dict:
    """Each of the failure panel's scenes as chapter 09 defines them, pressed once: its results, summary and chart."""
    _, codes = _chapter_09()
    failure = _cell_made(codes, "SCENES = {", FailurePanel=FailurePanel)["failure"]
    runs = {}
    for name in failure.presets:
        failure.apply_preset(name)
        runs[name] = {"results": list(failure.results), "summary": failure.last_summary, "executor": failure.executor,
                      "xlim": failure.figure.axes[0].get_xlim()}
    return runs


def _rate(run: dict) -> int:
    results = run["results"]
    return round(100 * sum(r.status == "success" for r in results) / len(results))


def _attempts(run: dict) -> int:
    return sum(len(r.trace) for r in run["results"])


def test_the_numbers_scenes_one_to_four_name_are_the_runs_numbers(scene_runs):
    """Every number chapter 09 names for scenes one to four (the table and the answers) is built here from the
    scene's own run; a sentence the chapter no longer holds, or a number the run no longer gives, fails."""
    from toolkit.simulation import BREAKER_THRESHOLD
    from toolkit.widgets.failure import time_axis

    text, _ = _chapter_09()
    base, timeouts = scene_runs["场景一 基线"], scene_runs["场景一 超时 30%"]
    rescued = {name: sum(r.status == "success" and len(r.trace) > 1 for r in run["results"])
               for name, run in scene_runs.items()}
    exhausted = sum(r.status == "error" and r.error_type == "retryable" for r in timeouts["results"])
    herd = scene_runs["场景三 无抖动"]
    waves = sorted({round(a.start, 6) for r in herd["results"] for a in r.trace[1:]})
    ceilings = [herd["executor"].policy.backoff.ceiling(n) for n in range(herd["executor"].policy.max_retries)]
    unlimited, budget, breaker = (scene_runs[f"场景四 {n}"] for n in ("不设限", "重试预算", "熔断器"))
    denied = budget["executor"].budget.denied
    fused = sum(not r.trace for r in breaker["results"])
    said = [
        f"成功率 {_rate(base)}%，{len(base['results'])} 次调用共 {_attempts(base)} 次尝试",
        f"摘要：{_attempts(timeouts)} 次尝试，成功率降到 {_rate(timeouts)}%",
        f"摘要：成功率 {_rate(scene_runs['场景二 权限与 500'])}%",
        f"（第 {'、'.join(f'{t:g}' for t in waves)} 秒）",
        f"最多等 {' + '.join(f'{c:g}' for c in ceilings)} = {time_axis(herd['executor']):g} 秒",
        f"摘要：{_attempts(unlimited)} 次尝试；",
        f"摘要：{_attempts(budget)} 次尝试，“重试额度拒绝 {denied} 次”",
        f"连续失败 {BREAKER_THRESHOLD} 次后断开",
        f"摘要：{_attempts(breaker)} 次尝试，“熔断拦下 {fused} 次”",
        f"{len(base['results'])} 次调用共 {_attempts(base)} 次尝试，多出来的 {_attempts(base) - len(base['results'])} "
        f"次就是重试，它们把 {rescued['场景一 基线']} 次",
        f"重试救回了 {rescued['场景一 超时 30%']} 次调用，尝试变成 {_attempts(timeouts)} 次，成功率却从 {_rate(base)}% "
        f"降到 {_rate(timeouts)}%",
        f"还有 {exhausted} 次调用重试用完也没成功",
        f"两次的尝试一样多（都是 {_attempts(herd)} 次）",
        f"放大成 {_attempts(unlimited) // len(unlimited['results'])} 倍（{len(unlimited['results'])} 次调用、"
        f"{_attempts(unlimited)} 次尝试）",
    ]
    missing = [sentence for sentence in said if sentence not in text]
    assert not missing, f"chapter 09 no longer says what its runs show: {missing}"
    assert _attempts(herd) == _attempts(scene_runs["场景三 全抖动"])
    assert _attempts(unlimited) == 4 * len(unlimited["results"])
    for run in scene_runs.values():  # the summary line says the same numbers
        assert f"成功率 {_rate(run)}%" in run["summary"] and f"共 {_attempts(run)} 次尝试" in run["summary"]


def test_what_scenes_one_to_four_tell_the_class_to_look_for_is_in_their_runs(scene_runs):
    base, timeouts = scene_runs["场景一 基线"], scene_runs["场景一 超时 30%"]
    timed_out = lambda run: sum(a.error_code == ErrorCode.TIMEOUT for r in run["results"] for a in r.trace)  # noqa: E731
    assert timed_out(timeouts) > 3 * timed_out(base) and _rate(timeouts) < _rate(base)
    # scene two: a permission error ends its call at once; server errors are retried
    permission = [r for r in scene_runs["场景二 权限与 500"]["results"]
                  if any(a.error_code == ErrorCode.PERMISSION_DENIED for a in r.trace)]
    assert permission and all(r.trace[-1].error_code == ErrorCode.PERMISSION_DENIED for r in permission)
    assert any(len(r.trace) > 1 and r.trace[0].error_code == ErrorCode.SERVER_ERROR
               for r in scene_runs["场景二 权限与 500"]["results"])
    # scene three: without jitter the retries come in a few columns, with it they spread; one time axis
    retry_times = {name: {round(a.start, 6) for r in scene_runs[name]["results"] for a in r.trace[1:]}
                   for name in ("场景三 无抖动", "场景三 全抖动")}
    assert len(retry_times["场景三 无抖动"]) == 3 and len(retry_times["场景三 全抖动"]) > 10
    assert scene_runs["场景三 无抖动"]["xlim"] == scene_runs["场景三 全抖动"]["xlim"]
    assert all(a.end - a.start == 0 for r in scene_runs["场景三 无抖动"]["results"] for a in r.trace)  # dots
    # scene four: every call tried four times; with the budget most only once; the breaker's refusals never ran
    assert {len(r.trace) for r in scene_runs["场景四 不设限"]["results"]} == {4}
    assert sum(len(r.trace) == 1 for r in scene_runs["场景四 重试预算"]["results"]) > 50
    refused = [r for r in scene_runs["场景四 熔断器"]["results"] if r.error_code == ErrorCode.CIRCUIT_OPEN]
    assert refused and not any(r.trace for r in refused)


def test_scenes_five_to_seven_show_what_chapter_09_says(offline):
    """Scene five's three runs, scene six's two budgets and scene seven's three picks, as the chapter makes them."""
    from toolkit.widgets.decisions import ACTION_LABELS

    text, codes = _chapter_09()
    agent = _cell_made(codes, "AGENT_SCENES = {", AgentPanel=AgentPanel)["agent"]
    tool_row = lambda: [r for r in agent.rows if r["role"] == "工具"]  # noqa: E731
    agent.apply_preset("场景五 超时")
    assert [r["attempts"] for r in tool_row()] == [3] and agent.verdict.ok and "工具行的“尝试”是 3，回答照样正确" in text
    agent.apply_preset("场景五 坏数据")
    assert "失败" in tool_row()[0]["status"] and "分析失败" in agent.run_record.answer and agent.verdict.ok
    agent.apply_preset("场景五 编造数字")
    assert "成功" in tool_row()[0]["status"] and not agent.verdict.ok

    budget = _cell_made(codes, "BudgetPlayground(", BudgetPlayground=BudgetPlayground)["budget"]
    assert f"（{len(budget.input_text):,} 个字符）" in text and f"再往右拖到底（{budget.budget.max:,}）" in text
    budget.budget.value = 200
    assert budget.state["cut"] and "已省略" in budget.result and budget.result.startswith(budget.input_text[:20])
    assert budget.result.endswith(budget.input_text[-20:])
    budget.budget.value = budget.budget.max
    assert budget.result == budget.input_text and "原样保留" in text

    picker = _cell_made(codes, "DecisionPicker(", DecisionPicker=DecisionPicker)["picker"]
    said = re.search(r"超时→“(.+?)”，权限不足→“(.+?)”，结果为空→“(.+?)”", text).groups()
    picked = [ACTION_LABELS[picker.pick(label)["action"]] for label in ("一直超时（重试用完）", "权限不足", "成功，但结果为空")]
    assert list(said) == picked


def test_a_scenes_settings_are_what_its_button_sets_so_code_can_repeat_its_run():
    """Chapter 09's 备查 cells run simulate_batch(**failure.scene_settings(name)): the button's own run."""
    from toolkit.simulation import simulate_batch
    from toolkit.widgets.failure import summarize_batch

    panel = FailurePanel(calls=30, seed=2, presets=SCENES)
    for name in SCENES:
        settings = panel.scene_settings(name)
        panel.apply_preset(name, run=False)
        assert settings == panel.settings(), name
    assert summarize_batch(simulate_batch(**panel.scene_settings("场景二"))) == panel.apply_preset("场景二")
    with pytest.raises(KeyError):
        panel.scene_settings("场景九")


def test_notebooks_store_no_widget_state_and_a_reader_without_a_kernel_sees_each_panels_picture():
    """Widget state is not stored (chapter 09 held 413 KB of it in 523 KB): it only let a trusted notebook draw
    dead copies of the controls without a kernel. A reader without a kernel sees each panel's stored picture
    or HTML (Panel._picture) and its text; a Reveal shows its one line and nothing of the answer. Re-execute
    with `--ExecutePreprocessor.store_widget_state=False` (CONTRIBUTING.md) to keep it so."""
    root = Path(__file__).resolve().parent.parent
    widget = "application/vnd.jupyter.widget-view+json"
    for path in sorted(p for folder in ("notebooks", "exercises", "solutions") for p in (root / folder).glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        assert "widgets" not in notebook["metadata"], f"{path.name} stores widget state"
        for cell in notebook["cells"]:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if widget in data:
                    text = "".join(data["text/plain"])
                    assert {"image/png", "text/html"} & set(data) or text.endswith("（按下按钮才显示）"), (path.name, text)
