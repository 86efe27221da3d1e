"""toolkit.viz: each chart's data, its colours and labels, determinism, empty inputs, and the CJK font.

Assertions look at the figure's artists (bar counts, colours, text), not at pixels.
Every chart is rendered with warnings turned into errors (matplotlib warns
"Glyph ... missing from font(s)" when a label would show as boxes), and with the
shipped font subset forced even where the system has a CJK font.
"""
from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
import warnings
from collections import Counter
from statistics import median

import pytest

matplotlib = pytest.importorskip("matplotlib")
np = pytest.importorskip("numpy")
from matplotlib import font_manager  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from toolkit import (Backoff, SimulatedClock, ToolExecutor, call_tool_with_retry,  # noqa: E402
                     ToolResult, inject_faults, smart_truncate, use_clock)
from toolkit import simulation, viz  # noqa: E402
from toolkit.truncate import truncate_parts  # noqa: E402
from toolkit.viz.style import fmt_seconds  # noqa: E402


# --- helpers -----------------------------------------------------------------------------

def render(fig, fmt: str = "png") -> bytes:
    """The figure's bytes, drawn with every warning (a missing glyph included) as an error."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metadata = {"Date": None} if fmt == "svg" else None
        with matplotlib.rc_context({"svg.hashsalt": "test"}):
            fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


def collection(fig, gid: str):
    found = [c for ax in fig.axes for c in ax.collections if c.get_gid() == gid]
    return found[0] if found else None


def bars(fig, gid: str) -> list:
    return [p for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


def paths(fig, gid: str) -> int:
    """How many shapes the collections with this gid hold (bars, boxes, windows)."""
    return sum(len(c.get_paths()) for ax in fig.axes for c in ax.collections if c.get_gid() == gid)


def lengths(fig, gid: str, axis: int = 0) -> list[float]:
    """Each rectangle's extent along `axis` (0: bar lengths of barh, 1: heights of bar) in the collections
    with this gid, in drawing order."""
    return [float(p.vertices[:, axis].max() - p.vertices[:, axis].min())
            for ax in fig.axes for c in ax.collections if c.get_gid() == gid for p in c.get_paths()]


def drawn_attempts(fig) -> Counter:
    """Attempts drawn in a timeline, per outcome: the bars, and the dots of attempts too short for a bar
    (told apart by their colour)."""
    found = Counter({key: paths(fig, f"attempts-{key}") for key in viz.OUTCOME_COLORS})
    by_colour = {colour: key for key, colour in viz.OUTCOME_COLORS.items()}
    dots = collection(fig, "instant-attempts")
    if dots is not None and len(dots.get_offsets()):
        found.update(by_colour[to_hex(c)] for c in dots.get_facecolors())
    return +found


def line(fig, gid: str):
    return [ln for ax in fig.axes for ln in ax.lines if ln.get_gid() == gid][0]


def texts(fig) -> list[str]:
    found = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        found += [t.get_text() for t in ax.texts] + [ax.get_title(), ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        found += [t.get_text() for t in ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            found += [t.get_text() for t in legend.get_texts()]
    for legend in fig.legends:
        found += [t.get_text() for t in legend.get_texts()]
    if fig._suptitle is not None:
        found.append(fig._suptitle.get_text())
    return found


def run(coro_fn, seed: int = 0):
    with use_clock(SimulatedClock(seed=seed)):
        return asyncio.run(coro_fn())


def ok_tool():
    return {"城市": "上海", "天气": "晴"}


@pytest.fixture(scope="module")
def three_attempts():
    """One call: a timeout, a 429 with Retry-After 2 s, then success."""
    tool = inject_faults(ok_tool, ["timeout", "rate_limit", "ok"], latency=0.1, retry_after=2.0)

    async def go():
        return await ToolExecutor(max_retries=3).execute(tool, "weather")
    return run(go)


@pytest.fixture(scope="module")
def batch():
    """50 concurrent calls over three tools with seeded faults, breaker-free."""
    async def go():
        executor = ToolExecutor(max_retries=3, concurrency=50)
        tools = [inject_faults(ok_tool, rates={"timeout": 0.2, "rate_limit": 0.1, "permission": 0.05,
                                               "partial": 0.05}, seed=s) for s in range(3)]
        await asyncio.gather(*[executor.execute(tools[i % 3], f"tool_{i % 3}") for i in range(50)])
        return executor
    return run(go)


@pytest.fixture
def shipped_font():
    """Force the shipped subset for one test, then restore the preferred font."""
    family = viz.setup_fonts(prefer_system=False)
    yield family
    viz.setup_fonts()


# --- retry_timeline -----------------------------------------------------------------------

def test_timeline_draws_one_bar_per_attempt_coloured_by_outcome(three_attempts):
    assert [a.outcome for a in three_attempts.trace] == ["timeout", "error", "ok"]
    fig = viz.retry_timeline(three_attempts)
    for key in ("timeout", "retryable", "ok"):
        bars_of_kind = collection(fig, f"attempts-{key}")
        assert len(bars_of_kind.get_paths()) == 1
        assert to_hex(bars_of_kind.get_facecolor()[0]) == viz.OUTCOME_COLORS[key]
    assert paths(fig, "attempts-fatal") == 0
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:3] == [viz.OUTCOME_LABELS[k] for k in ("ok", "retryable", "timeout")]
    assert viz.NOT_RUN_LABEL not in legend  # the key names what the picture holds
    render(fig)


def test_timeline_labels_each_wait_with_its_length_and_marks_retry_after(three_attempts):
    fig = viz.retry_timeline(three_attempts)
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "wait-label"]
    waits = [a.wait_after for a in three_attempts.trace if a.wait_after > 0]
    assert len(labels) == len(waits) == 2
    assert labels[0].startswith(fmt_seconds(waits[0])) and "Retry-After" not in labels[0]
    assert labels[1] == f"{fmt_seconds(waits[1])} Retry-After"
    assert waits[1] >= 2.0  # the server's Retry-After held
    assert len(collection(fig, "retry-after-waits").get_segments()) == 1
    assert len(collection(fig, "waits").get_segments()) == 1


def test_timeline_marks_the_deadline_at_its_time(three_attempts):
    fig = viz.retry_timeline(three_attempts, deadline=5.0)
    line = [ln for ln in fig.axes[0].lines if ln.get_gid() == "deadline"][0]
    assert list(line.get_xdata()) == [5.0, 5.0]
    assert any("总时限 5s" in t for t in texts(fig))


def test_timeline_of_a_permission_error_shows_one_fatal_attempt():
    tool = inject_faults(ok_tool, ["permission"])

    async def go():
        return await ToolExecutor(max_retries=3).execute(tool, "files")
    result = run(go)
    fig = viz.retry_timeline(result)
    assert drawn_attempts(fig) == Counter({"fatal": 1}) and paths(fig, "attempts-fatal") == 1


def test_timeline_of_fifty_concurrent_calls_has_a_row_per_call_and_all_attempts(batch):
    calls = list(batch.call_history)
    fig = viz.retry_timeline(calls)
    drawn = drawn_attempts(fig)
    expected = Counter(viz.attempt_outcome(a) for r in calls for a in r.trace)
    assert drawn == expected and sum(drawn.values()) > 50  # some calls were retried
    assert fig.axes[0].get_ylim() == (49.5, -0.5)
    assert f"50 次调用，{sum(expected.values())} 次尝试" in fig.axes[0].get_title("left")
    render(fig)


def test_timeline_accepts_a_retry_outcome_and_the_executor_itself(batch):
    tool = inject_faults(ok_tool, ["server_error", "ok"])

    async def go():
        return await call_tool_with_retry(tool, max_retries=2)
    outcome = run(go)
    fig = viz.retry_timeline(outcome)
    assert drawn_attempts(fig) == Counter({"retryable": 1, "ok": 1})
    assert (viz.retry_timeline(batch).axes[0].get_title("left")
            == viz.retry_timeline(list(batch.call_history)).axes[0].get_title("left"))


def test_timeline_names_every_row_of_a_few_calls_and_numbers_a_few_rows_of_many(batch):
    few = viz.retry_timeline(list(batch.call_history)[:20])
    assert [t.get_text() for t in few.axes[0].get_yticklabels()] == [f"{i}. {r.name}" for i, r in
                                                                       enumerate(list(batch.call_history)[:20], 1)]
    many = [t.get_text() for t in viz.retry_timeline(batch).axes[0].get_yticklabels()]
    assert many[0] == "1" and many[-1] == "50" and 4 <= len(many) <= 9


def test_a_presentation_timeline_of_many_calls_fits_a_laptop_screen_and_its_thin_bars_keep_their_colour(batch):
    """Presentation mode, past LABELLED_ROWS rows: at most BIG_TALLEST inches tall (it sits under the failure
    panel's scene buttons on a 1280×800 screen: tests/test_browser.py), bars filling most of their row with no
    white edge; a few rows keep their white edges, which part one attempt from the next."""
    from toolkit.viz.timeline import BIG_TALLEST, LABELLED_ROWS, TimelineChart

    calls = list(batch.call_history)
    many = TimelineChart(legend=False, big=True).update(calls).figure
    assert len(calls) > LABELLED_ROWS and many.get_size_inches()[1] <= BIG_TALLEST
    attempts = [c for c in many.axes[0].collections if (c.get_gid() or "").startswith("attempts-") and c.get_paths()]
    assert attempts and all(list(c.get_linewidths()) == [0.0] for c in attempts)
    heights = {round(float(p.vertices[:, 1].max() - p.vertices[:, 1].min()), 2) for c in attempts for p in c.get_paths()}
    assert heights == {0.84}
    few = TimelineChart(legend=False, big=True).update(calls[:10]).figure
    assert all(list(c.get_linewidths()) == [0.4] for c in few.axes[0].collections
               if (c.get_gid() or "").startswith("attempts-") and c.get_paths())
    render(many, "svg")


def test_timeline_of_no_calls_is_an_empty_state_figure():
    fig = viz.retry_timeline([])
    assert fig.empty_state is True
    assert "还没有调用记录" in texts(fig)
    render(fig)


def test_timeline_refuses_records_it_does_not_know():
    with pytest.raises(TypeError, match="retry_timeline"):
        viz.retry_timeline([{"name": "x"}])


# --- backoff strategies and the herd --------------------------------------------------------

def test_backoff_strategies_plots_each_modes_median_over_the_seeds():
    fig = viz.backoff_strategies(5, base=1.0, cap=30.0, seeds=50)
    assert len(fig.axes) == 4
    for ax, mode in zip(fig.axes, viz.JITTER_MODES):
        policy = Backoff(base=1.0, cap=30.0, jitter=mode)
        schedules = [policy.schedule(5, seed=s) for s in range(50)]
        line = [ln for ln in ax.lines if ln.get_gid() == "median"][0]
        assert list(line.get_ydata()) == [median(s[i] for s in schedules) for i in range(5)]
        dots = [c for c in ax.collections if c.get_gid() == "seed-waits"][0]
        assert len(dots.get_offsets()) == 50 * 5
    assert list([ln for ln in fig.axes[0].lines if ln.get_gid() == "median"][0].get_ydata()) == [1, 2, 4, 8, 16]
    render(fig)


def test_herd_histogram_totals_equal_the_arrivals_and_peaks_are_printed():
    fig = viz.thundering_herd(60, retries=3, bin_ms=100, seed=1)
    peaks = simulation.herd_peaks(60, retries=3, bin_ms=100, seed=1)
    for ax, mode in zip(fig.axes, viz.JITTER_MODES):
        stairs = [p for p in ax.patches if p.get_gid() == f"herd-{mode}"][0]
        values = stairs.get_data().values
        assert sum(values) == 60 * 3
        assert max(values) == peaks[mode]
        assert f"峰值 {peaks[mode]} 次/100 ms" in [t.get_text() for t in ax.texts]
    render(fig)


# --- call statistics -------------------------------------------------------------------------

def test_call_stats_stacks_each_tools_calls_by_how_they_ended(batch):
    fig = viz.call_stats(batch)
    calls = list(batch.call_history)
    names = sorted({r.name for r in calls})
    for outcome in ("ok", "partial", "retryable", "timeout", "fatal"):
        per_tool = Counter(r.name for r in calls if viz.call_outcome(r) == outcome)
        assert lengths(fig, f"calls-{outcome}") == [per_tool[n] for n in names if per_tool[n]], outcome
    assert sum(sum(lengths(fig, f"calls-{k}")) for k in ("ok", "partial", "retryable", "timeout", "fatal")) == 50
    per_tool = batch.get_summary()["per_tool"]
    rates = [t for t in texts(fig) if "成功率" in t and "\n" in t]
    assert rates == [f"{n}\n成功率 {per_tool[n]['success'] / per_tool[n]['calls']:.0%}" for n in names]
    assert fig.get_layout_engine() is None  # a fixed layout: drawing it draws it once
    render(fig)


def test_call_stats_counts_retries_per_call_and_failed_attempts_by_code(batch):
    fig = viz.call_stats(batch)
    calls = list(batch.call_history)
    retries = Counter(r.retries for r in calls)
    assert lengths(fig, "retries", axis=1) == [retries[x] for x in range(max(retries) + 1) if retries[x]]
    timeouts = sum(1 for r in calls for a in r.trace if a.error_code == "TIMEOUT")
    assert sum(lengths(fig, "errors-timeout")) == timeouts > 0
    failed = sum(1 for r in calls for a in r.trace if a.outcome != "ok")
    attempts = sum(len(r.trace) for r in calls)
    assert any(f"失败的尝试：{failed} 次（共 {attempts} 次尝试）" == t for t in texts(fig))
    assert f"共 {attempts} 次尝试" in fig._suptitle.get_text()


def test_call_stats_of_a_list_of_results_matches_the_executor(batch):
    from_list = viz.call_stats(list(batch.call_history))
    from_executor = viz.call_stats(batch)
    assert lengths(from_list, "calls-ok") == lengths(from_executor, "calls-ok") != []
    assert render(from_list) == render(from_executor)


def test_call_stats_of_an_unused_executor_is_an_empty_state_figure():
    fig = viz.call_stats(ToolExecutor())
    assert fig.empty_state is True
    render(fig)


# --- budget curve and truncation map ---------------------------------------------------------

def test_budget_curve_stays_within_the_budget_while_the_naive_dump_grows():
    fig = viz.budget_curve([10, 100, 1000], max_chars=800)
    ax = fig.axes[0]
    budgeted = [ln for ln in ax.lines if ln.get_gid() == "budgeted"][0]
    naive = [ln for ln in ax.lines if ln.get_gid() == "naive"][0]
    assert list(naive.get_ydata()) == [len(json.dumps(viz.sample_records(n), ensure_ascii=False, indent=2))
                                       for n in (10, 100, 1000)]
    assert all(y <= 800 for y in budgeted.get_ydata())
    assert naive.get_ydata()[-1] > 100 * 800
    assert ax.get_xscale() == "log"
    render(fig)


def test_budget_curve_refuses_no_sizes():
    with pytest.raises(ValueError, match="sizes"):
        viz.budget_curve([])


@pytest.mark.parametrize("text", [
    "".join(f"第 {i} 行：销售记录\n" for i in range(2000)),
    "\n\n".join(f"第 {i} 段。" for i in range(1500)),  # blank lines: the marker's own newlines touch the text's
    "一" * 5000,
])
def test_truncation_map_shows_smart_truncates_exact_head_cut_and_tail(text):
    parts = truncate_parts(text, max_chars=1000, keep_head=600, keep_tail=300)
    fig = viz.truncation_map(text, parts)
    head, gap, tail = (bars(fig, f"segment-{k}")[0].get_width() for k in ("head", "cut", "tail"))
    assert (head, gap, tail) == (len(parts.head), parts.omitted, len(parts.tail))
    assert head + gap + tail == len(text)
    assert parts.text == smart_truncate(text, max_chars=1000, keep_head=600, keep_tail=300)
    assert f"给模型 {len(parts.text):,} 字符" in fig.axes[0].get_title("left")
    assert f"省略 {parts.omitted:,}，标记 {len(parts.marker)}" in fig.axes[0].get_title("left")
    render(fig)


def test_truncation_map_of_an_uncut_text_keeps_everything():
    fig = viz.truncation_map("短文本", "短文本")
    assert [p.get_width() for p in bars(fig, "segment-head")] == [3]
    assert bars(fig, "segment-cut") == []


def test_truncation_map_measures_any_other_cut_by_common_prefix_and_suffix():
    parts = viz.truncation_parts("abcdefghij", "abc...ij")
    assert parts == {"head": 3, "cut": 5, "tail": 2, "added": 3, "total": 10, "result": 8}


def test_truncation_map_refuses_empty_or_non_text():
    with pytest.raises(ValueError):
        viz.truncation_map("", "")
    with pytest.raises(TypeError):
        viz.truncation_map(["a"], "a")
    with pytest.raises(TypeError):
        viz.truncation_map("abc", 3)


# --- determinism, fonts, no global state ------------------------------------------------------

def all_charts(three_attempts, batch):
    text = "日志行\n" * 3000
    return {
        "timeline": viz.retry_timeline(three_attempts, deadline=6.0),
        "timeline_batch": viz.retry_timeline(batch.call_history),
        "backoff": viz.backoff_strategies(4, seeds=30),
        "herd": viz.thundering_herd(30, retries=3),
        "stats": viz.call_stats(batch),
        "budget": viz.budget_curve([10, 1000]),
        "truncation": viz.truncation_map(text, truncate_parts(text, 1000, 500, 300)),
        "empty": viz.call_stats([]),
    }


def test_same_data_gives_the_same_png_and_svg_bytes(three_attempts, batch):
    first = all_charts(three_attempts, batch)
    second = all_charts(three_attempts, batch)
    for name in first:
        assert render(first[name]) == render(second[name]), name
    assert render(first["timeline"], "svg") == render(second["timeline"], "svg")


def test_every_chart_renders_with_the_shipped_font_and_no_missing_glyph(three_attempts, batch, shipped_font):
    assert shipped_font == viz.SHIPPED_FAMILY
    for name, fig in all_charts(three_attempts, batch).items():
        render(fig)  # a missing glyph would raise here
        title = fig.axes[0]._left_title
        assert font_manager.findfont(title.get_fontproperties()) == str(viz.SHIPPED_FONT), name


def test_shipped_font_covers_every_chinese_character_in_the_charts_and_common_hanzi():
    from fontTools.ttLib import TTFont

    from pathlib import Path

    cmap = TTFont(str(viz.SHIPPED_FONT))["cmap"].getBestCmap()
    source = "".join(path.read_text(encoding="utf-8") for path in Path(viz.__file__).parent.glob("*.py"))
    used = set(re.findall(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", source))
    assert used and [c for c in used if ord(c) not in cmap] == []
    level1 = {bytes([row, cell]).decode("gb2312") for row in range(0xB0, 0xD8) for cell in range(0xA1, 0xFF)
              if (row, cell) < (0xD7, 0xFA)}
    assert len(level1) == 3755
    assert [c for c in level1 if ord(c) not in cmap] == []
    assert viz.SHIPPED_FONT.stat().st_size < 1_500_000
    assert (viz.SHIPPED_FONT.parent / "OFL.txt").read_text(encoding="utf-8").count("SIL Open Font License") >= 1


def test_preferred_font_is_a_system_cjk_font_when_one_is_installed():
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    family = viz.setup_fonts()
    system = [name for name in viz.SYSTEM_CJK_FAMILIES if name in installed]
    assert family == (system[0] if system else viz.SHIPPED_FAMILY)
    assert matplotlib.rcParams["axes.unicode_minus"] is False
    assert matplotlib.rcParams["font.family"][:1] == [family]


def test_charts_leave_nothing_in_pyplot():
    code = ("import sys; from toolkit import viz; viz.backoff_strategies(2, seeds=2); viz.retry_timeline([]); "
            "print('matplotlib.pyplot' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # outside a notebook pyplot is never even imported


def test_same_png_bytes_in_a_fresh_process(three_attempts):
    code = ("import asyncio, hashlib, io; from toolkit import *; from toolkit import viz\n"
            "tool = inject_faults(lambda: {'城市': '上海', '天气': '晴'}, ['timeout', 'rate_limit', 'ok'])\n"
            "with use_clock(SimulatedClock(seed=0)):\n"
            "    r = asyncio.run(ToolExecutor(max_retries=3).execute(tool, 'weather'))\n"
            "b = io.BytesIO(); viz.retry_timeline(r, deadline=6.0).savefig(b, format='png')\n"
            "print(hashlib.sha256(b.getvalue()).hexdigest())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import hashlib
    here = io.BytesIO()
    viz.retry_timeline(three_attempts, deadline=6.0).savefig(here, format="png")
    assert done.stdout.strip() == hashlib.sha256(here.getvalue()).hexdigest()


# --- circuit breaker and retry budget in call_stats -----------------------------------------------

@pytest.fixture(scope="module")
def guarded():
    """Waves of calls to a failing service, with a circuit breaker and a small retry budget, and every
    event a hook collected: (executor, events)."""
    from types import SimpleNamespace

    from toolkit import CircuitBreaker, RetryBudget, get_clock

    events = []

    async def go():
        executor = ToolExecutor(max_retries=3, breaker=CircuitBreaker(failure_threshold=3, cooldown=5.0),
                                budget=RetryBudget(capacity=60), hooks=[events.append])
        tools = [inject_faults(ok_tool, rates={"timeout": 0.3, "unavailable": 0.3}, seed=s) for s in range(2)]
        for _ in range(6):
            await asyncio.gather(*[executor.execute(tools[i % 2], f"tool_{i % 2}") for i in range(10)])
            await get_clock().sleep(2)
        return executor
    return SimpleNamespace(executor=run(go), events=events)


def test_call_stats_draws_the_breaker_and_the_budget_from_their_events(guarded):
    executor, events = guarded.executor, guarded.events
    fig = viz.call_stats(executor, events=events)
    assert len(fig.axes) == 6
    history = list(executor.call_history)
    t0 = min(r.started_at for r in history)
    refused = [r for r in history if r.error_code == "CIRCUIT_OPEN"]
    marks = line(fig, "breaker-refused")
    assert len(marks.get_xdata()) == len(refused) == sum(1 for e in events if e.kind == "breaker_reject") > 0
    windows = viz.breaker_windows(events)
    opened = [e for e in events if e.kind == "breaker_state" and e.state == "open"]
    assert paths(fig, "breaker-open") == len(opened) == sum(1 for w in windows.values() for *_, st in w if st == "open")
    for r in refused:  # every refused call fell inside an open window of its tool
        assert any(a <= r.started_at <= b for a, b, state in windows[r.name] if state == "open"), r.started_at
    tokens = line(fig, "budget-tokens")
    points = viz.budget_tokens(events, executor.budget.capacity)
    assert list(tokens.get_ydata()) == [v for _, v in points] and points[0][1] == 60
    assert list(tokens.get_xdata()) == [t - t0 for t, _ in points]
    assert points[-1][1] == executor.budget.tokens  # the events end where the real budget is
    denied = [e for e in events if e.kind == "budget_deny"]
    assert len(line(fig, "budget-denied").get_xdata()) == len(denied) == executor.budget.denied > 0
    assert any(f"被拒的重试（{len(denied)} 次）" in t for t in texts(fig))
    render(fig)


def test_a_rejected_call_is_no_attempt_in_the_statistics(guarded):
    """Calls the breaker refused are counted apart: a grey part of their tool's bar, not failed attempts."""
    executor, events = guarded.executor, guarded.events
    fig = viz.call_stats(executor, events=events)
    history = list(executor.call_history)
    refused = [r for r in history if r.error_code == "CIRCUIT_OPEN"]
    failed = sum(1 for r in history for a in r.trace if a.outcome != "ok")
    assert sum(lengths(fig, "calls-not_run")) == len(refused) > 0
    assert sum(sum(lengths(fig, f"errors-{k}")) for k in ("retryable", "timeout", "fatal", "partial")) == failed
    assert "CIRCUIT_OPEN" not in [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert sum(lengths(fig, "retries", axis=1)) == len(history) - len(refused)  # only calls that ran
    assert viz.NOT_RUN_LABEL in [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert f"熔断拦下 {len(refused)} 次" in fig._suptitle.get_text()


def test_without_events_the_statistics_show_what_the_results_say_and_say_so(guarded):
    fig = viz.call_stats(guarded.executor)
    refused = [r for r in guarded.executor.call_history if r.error_code == "CIRCUIT_OPEN"]
    assert len(line(fig, "breaker-refused").get_xdata()) == len(refused)
    assert paths(fig, "breaker-open") == 0 and list(line(fig, "budget-tokens").get_ydata()) == []
    assert any("要收集事件" in t for t in texts(fig))
    render(fig)


def test_budget_tokens_follow_the_withdrawals_and_the_refund():
    from toolkit import RetryBudget

    tool = inject_faults(ok_tool, ["timeout", "server_error", "ok"])
    budget = RetryBudget(capacity=100)
    events = []

    async def go():
        return await ToolExecutor(max_retries=3, budget=budget, hooks=[events.append]).execute(tool, "t")
    run(go)
    points = viz.budget_tokens(events, 100)
    assert [v for _, v in points] == [100, 90, 85, 86]  # timeout retry 10, 5xx retry 5, success +1
    assert points[-1][1] == budget.tokens
    assert [v for _, v in viz.budget_tokens(events)] == [100, 90, 85, 86]  # capacity read back from the first event


def test_breaker_windows_end_at_the_next_change_or_after_the_cooldown():
    from toolkit.hooks import ToolEvent

    events = [ToolEvent("breaker_state", "a", None, 1.0, state="open", previous="closed", wait=5.0),
              ToolEvent("breaker_state", "a", None, 8.0, state="half_open", previous="open"),
              ToolEvent("breaker_state", "a", None, 8.5, state="closed", previous="half_open"),
              ToolEvent("breaker_state", "b", None, 2.0, state="open", previous="closed", wait=5.0),
              ToolEvent("breaker_state", "b", None, float("nan"), state="closed", previous="open")]
    assert viz.breaker_windows(events) == {"a": [(1.0, 6.0, "open"), (8.0, 8.5, "half_open")],
                                           "b": [(2.0, 7.0, "open")]}


def test_a_chart_shows_itself_as_png_in_a_notebook():
    PNGFormatter = pytest.importorskip("IPython.core.formatters").PNGFormatter

    fig = viz.truncation_map("短文本", "短文本")
    data = PNGFormatter()(fig)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_row_empties_a_chart_but_keeps_its_frame():
    from bench import charts

    executor, results = charts.history(40)
    assert len(results) == 40 and executor.get_summary()["total_calls"] == 40
    fig = charts.emptied(viz.call_stats(executor))
    assert all(not ax.patches and not ax.lines and not ax.collections for ax in fig.axes)
    assert fig.axes[0].get_title(loc="left") == "每个工具的调用（按结局）"
    assert tuple(charts.blank_like(fig).get_size_inches()) == tuple(fig.get_size_inches())
    assert charts.png_seconds(fig) > 0


def test_on_a_machine_without_system_fonts_the_shipped_font_is_chosen_and_every_label_renders():
    # A fresh process that sees only matplotlib's own fonts (DejaVu), as on a fresh Linux box.
    code = """
import io, warnings
from matplotlib import font_manager
font_manager.fontManager.ttflist = [f for f in font_manager.fontManager.ttflist if "mpl-data" in f.fname]
font_manager.fontManager._findfont_cached.cache_clear()
from toolkit import viz
from toolkit.truncate import truncate_parts
assert viz.font_family() == viz.SHIPPED_FAMILY, viz.font_family()
warnings.simplefilter("error")
text = "工具返回的日志\\n" * 500
figs = [viz.backoff_strategies(3, seeds=5), viz.thundering_herd(10, retries=2), viz.call_stats([]),
        viz.truncation_map(text, truncate_parts(text, 1000, 500, 300)), viz.budget_curve([10, 100])]
for fig in figs:
    fig.savefig(io.BytesIO(), format="png")
print("rendered", len(figs))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "rendered 5"


def test_timeline_draws_the_calls_a_hook_saw_finish():
    events = []
    tools = [inject_faults(ok_tool, ["timeout", "ok"]), inject_faults(ok_tool, ["permission"])]

    async def go():
        executor = ToolExecutor(max_retries=2, hooks=[events.append])
        await asyncio.gather(executor.execute(tools[0], "a"), executor.execute(tools[1], "b"))
        return executor
    executor = run(go)
    fig = viz.retry_timeline(events)
    from_history = viz.retry_timeline(executor.call_history)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == \
        [t.get_text() for t in from_history.axes[0].get_yticklabels()]
    assert sum(drawn_attempts(fig).values()) == 3


def test_timeline_refuses_a_faulty_tool_it_no_longer_reads():
    """A FaultyTool's own calls are not a retry record (no waits, no outcome the caller saw)."""
    tool = inject_faults(ok_tool, ["timeout"])
    with pytest.raises(TypeError, match="retry_timeline"):
        viz.retry_timeline(tool)


def test_call_stats_draws_durations_equal_up_to_float_rounding():
    """A clean batch on the simulated clock gives 99.99999999999997 and 100.0 ms: one bar, no error."""
    results = [ToolResult("t", "ok", duration_ms=100.0 - (i % 2) * 3e-14) for i in range(40)]
    fig = viz.call_stats(results)
    assert lengths(fig, "durations", axis=1) == [40.0]


# --- LiveCharts: the failure panel's figures, redrawn in place ------------------------------------

def test_live_charts_draw_every_attempt_call_and_failed_attempt(batch):
    live = viz.LiveCharts()
    png = live.draw(batch)
    assert set(png) == {"timeline", "stats"} and all(b.startswith(b"\x89PNG") for b in png.values())
    timeline, stats = live.figures["timeline"], live.figures["stats"]
    history = list(batch.call_history)
    assert sum(drawn_attempts(timeline).values()) == sum(r.attempts for r in history)
    assert drawn_attempts(timeline) == Counter(viz.attempt_outcome(a) for r in history for a in r.trace)
    assert paths(timeline, "waits") + paths(timeline, "retry-after-waits") == sum(r.retries for r in history)
    outcomes = Counter(viz.call_outcome(r) for r in history)
    for outcome in ("ok", "partial", "retryable", "timeout", "fatal", "not_run"):
        assert sum(lengths(stats, f"calls-{outcome}")) == outcomes[outcome], outcome
    failed_attempts = sum(1 for r in history for a in r.trace if viz.attempt_outcome(a) != "ok")
    assert sum(sum(lengths(stats, f"errors-{k}")) for k in ("retryable", "timeout", "fatal", "partial")) == failed_attempts
    assert sum(lengths(stats, "retries", axis=1)) == len(history)  # one bar per retry count, together every call
    assert f"{len(history)} 次调用" in stats._suptitle.get_text()
    assert not any(ax.get_legend() for fig in live.figures.values() for ax in fig.axes)  # the key is the panel's
    assert not stats.legends


def test_the_live_charts_and_the_notebook_charts_are_one_drawing(batch, guarded):
    """LiveCharts keeps the builders retry_timeline and call_stats use: same data, same artists' data."""
    live = viz.LiveCharts()
    for executor, events in ((batch, None), (guarded.executor, guarded.events)):
        live.draw(executor, events)
        pairs = ((live.figures["timeline"], viz.retry_timeline(executor)),
                 (live.figures["stats"], viz.call_stats(executor, events=events)))
        for kept, anew in pairs:
            gids = {c.get_gid() for ax in anew.axes for c in ax.collections} | {ln.get_gid() for ax in anew.axes
                                                                               for ln in ax.lines}
            for gid in sorted(g for g in gids if g):
                got = [c.get_paths() for ax in kept.axes for c in ax.collections if c.get_gid() == gid]
                want = [c.get_paths() for ax in anew.axes for c in ax.collections if c.get_gid() == gid]
                assert [[p.vertices.tolist() for p in ps] for ps in got] == \
                    [[p.vertices.tolist() for p in ps] for ps in want], gid
                got = [ln.get_xydata().tolist() for ax in kept.axes for ln in ax.lines if ln.get_gid() == gid]
                want = [ln.get_xydata().tolist() for ax in anew.axes for ln in ax.lines if ln.get_gid() == gid]
                assert got == want, gid
            key_row = 0.3 if anew.legends else 0.0  # the notebook's statistics carry their key in a row of their own
            assert kept.get_size_inches()[1] == pytest.approx(anew.get_size_inches()[1] - key_row)


def test_live_charts_reused_give_the_same_bytes_as_new_ones(batch, guarded):
    """Whatever was drawn before (another shape, wait labels, a breaker row), a redraw leaves nothing of it."""
    live = viz.LiveCharts()
    g = (guarded.executor, guarded.events)
    for source in (g, (batch, None), g):
        live.draw(*source)
    assert live.draw(batch) == viz.LiveCharts().draw(batch)
    assert live.draw(*g) == viz.LiveCharts().draw(*g)
    assert len(live.figures["stats"].axes) == 6  # the breaker and budget row came back with the guarded run


def test_live_timeline_labels_waits_for_a_few_calls_only(three_attempts, batch):
    class One:  # an executor-like record with one call
        call_history = [three_attempts]

        def get_summary(self):
            return {"total_calls": 1}
    live = viz.LiveCharts()
    live.draw(One())
    labels = [t.get_text() for t in live.figures["timeline"].axes[0].texts if t.get_gid() == "wait-label"]
    assert len(labels) == 2 and any("Retry-After" in t for t in labels)
    live.draw(batch)  # 50 rows: no wait labels, and none left over from the first draw
    assert [t for t in live.figures["timeline"].axes[0].texts if t.get_gid() == "wait-label"] == []


def test_live_charts_render_with_the_shipped_font_and_no_missing_glyph(guarded, shipped_font):
    live = viz.LiveCharts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        live.draw(guarded.executor, guarded.events)
    for fig in live.figures.values():
        assert font_manager.findfont(fig.axes[0]._left_title.get_fontproperties()) == str(viz.SHIPPED_FONT)


def test_live_charts_of_an_unused_executor_say_there_are_no_calls():
    live = viz.LiveCharts()
    png = live.draw(ToolExecutor())
    assert png["timeline"].startswith(b"\x89PNG")
    assert "还没有调用记录" in live.figures["timeline"].axes[0].get_title("left")
    assert "还没有调用记录" in live.figures["stats"]._suptitle.get_text()


# --- times that are not finite numbers, instant attempts -------------------------------------------

def nan_shapes():
    """Records with a NaN or infinite time in several places, each with one good call beside it."""
    from toolkit import Attempt

    nan, inf = float("nan"), float("inf")
    good = ToolResult("good", {"ok": 1}, duration_ms=100.0, started_at=0.0,
                      trace=[Attempt(1, 0.0, 0.1, "ok")])

    def one(trace, **kw):
        return ToolResult("bad", {"ok": 1}, attempts=max(len(trace), 1), trace=trace, **kw)
    return {
        "nan start": [good, one([Attempt(1, nan, 0.2, "ok")], started_at=nan)],
        "inf end": [good, one([Attempt(1, 0.0, inf, "ok")])],
        "-inf start": [good, one([Attempt(1, -inf, 0.1, "ok")])],
        "nan wait": [good, one([Attempt(1, 0.0, 0.1, "error", "retryable", "TIMEOUT", "x", nan),
                                Attempt(2, 0.2, 0.3, "ok")])],
        "inf wait": [good, one([Attempt(1, 0.0, 0.1, "error", "retryable", "RATE_LIMITED", "x", inf),
                                Attempt(2, 0.2, 0.3, "ok")])],
        "nan duration": [good, one([Attempt(1, 0.0, 0.1, "ok")], duration_ms=nan)],
        "inf started_at, not run": [good, ToolResult("bad", None, "拦下", error_type="retryable",
                                                     error_code="CIRCUIT_OPEN", attempts=0, started_at=inf)],
        "all bad": [one([Attempt(1, nan, nan, "ok")], started_at=nan, duration_ms=inf)],
    }


@pytest.mark.parametrize("shape", list(nan_shapes()))
def test_charts_skip_times_that_are_not_finite_and_say_so(shape):
    records = nan_shapes()[shape]
    timeline = viz.retry_timeline(records)
    stats = viz.call_stats(records)
    render(timeline)
    render(stats)
    for fig in (timeline, stats):
        for ax in fig.axes:
            assert all(np.isfinite(lim) for lim in (*ax.get_xlim(), *ax.get_ylim())), shape
    timeline_says = any("不是有限数" in t for t in texts(timeline))
    stats_says = any("不是有限数" in t for t in texts(stats))
    assert timeline_says == (shape != "nan duration"), shape  # the timeline reads attempt times
    assert stats_says == (shape in ("nan start", "nan duration", "inf started_at, not run", "all bad")), shape
    live = viz.LiveCharts()
    assert live.draw(records)["timeline"].startswith(b"\x89PNG")


def test_an_instant_success_is_a_dot_not_a_line_like_the_retry_after_key():
    from toolkit import Attempt

    trace = [Attempt(1, 0.0, 0.0, "error", "retryable", "RATE_LIMITED", "429", 2.0), Attempt(2, 2.0, 2.0, "ok")]
    fig = viz.retry_timeline(ToolResult("t", {"ok": 1}, attempts=2, trace=trace))
    dots = collection(fig, "instant-attempts")
    assert dots.get_offsets().tolist() == [[0.0, 0.0], [2.0, 0.0]]
    assert [to_hex(c) for c in dots.get_facecolors()] == [viz.OUTCOME_COLORS["retryable"], viz.OUTCOME_COLORS["ok"]]
    assert dots.get_sizes()[0] > 10  # a dot one can see, not a hairline
    assert paths(fig, "attempts-ok") == 0 and len(collection(fig, "retry-after-waits").get_segments()) == 1
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert viz.INSTANT_LABEL in legend and "按 Retry-After 等待" in legend
    render(fig)


def test_the_naive_dump_is_counted_exactly_without_building_it():
    from toolkit.viz.budget import _naive_chars

    shapes = [viz.sample_records(1), viz.sample_records(37), viz.sample_records(30_000),
              [{"a": "带\n换行", "b": "\"引号\""}, {"b": None, "c": 1.5, "d": True}]]
    for records in shapes:
        assert _naive_chars(records) == len(json.dumps(records, ensure_ascii=False, indent=2)), records


# --- presentation mode: the failure panel's charts for a projector ----------------------------------------------

def test_presentation_mode_charts_have_no_text_under_its_minimum_in_a_narrower_figure(batch):
    from toolkit.viz.style import BIG_MIN_PT, BIG_WIDTH, smallest_text_pt

    normal, big = viz.LiveCharts(), viz.LiveCharts(big=True)
    normal.draw(batch)
    big.draw(batch)
    for name in ("timeline", "stats"):
        assert big.figures[name].get_size_inches()[0] == BIG_WIDTH < normal.figures[name].get_size_inches()[0]
        assert smallest_text_pt(big.figures[name]) >= BIG_MIN_PT > smallest_text_pt(normal.figures[name])
    # the statistics in two rows of two, no taller than their text needs: on a 1920×1080 screen, shown CHART_PX
    # wide under the scene buttons (tests/test_browser.py measures it there)
    axes = big.stats.axes
    assert axes["tools"].get_position().x1 < axes["errors"].get_position().x0
    assert axes["errors"].get_position().y0 > axes["durations"].get_position().y1
    assert axes["durations"].get_position().x1 < axes["retries"].get_position().x0
    width, height = big.figures["stats"].get_size_inches()
    assert height / width < 0.8 and big.figures["timeline"].get_size_inches()[1] / width < 0.6


def test_presentation_statistics_of_a_guarded_run_show_the_breaker_and_budget_below_and_stay_one_screen(guarded):
    """With a breaker or a budget, presentation mode's second row is theirs (the histograms stay out of that
    picture, and its title does not send the reader to them); the figure is no taller than without them."""
    big = viz.LiveCharts(big=True)
    big.stats.update(guarded.executor, guarded.events)
    axes, fig = big.stats.axes, big.figures["stats"]
    assert not axes["durations"].get_visible() and not axes["retries"].get_visible()
    assert axes["breaker"].get_visible() and axes["breaker"].get_position().y1 < axes["tools"].get_position().y0
    assert "耗时和重试两图" not in fig._suptitle.get_text()
    width, height = fig.get_size_inches()
    assert height / width < 0.85
    assert "耗时和重试两图" in viz.call_stats(guarded.executor, events=guarded.events)._suptitle.get_text()


def test_a_presentation_timeline_draws_a_few_rows_worth_looking_at_and_says_so(batch):
    """Past BIG_ROWS calls, presentation mode's timeline draws BIG_ROWS of the calls worth looking at
    (retried, not successful, never run), spread over them and numbered as in the batch; the title says
    how many there were; the time axis still starts at the batch's first attempt."""
    from toolkit.viz.live import BIG_ROWS
    from toolkit.viz.timeline import Y_LABEL

    calls = list(batch.call_history)
    eventful = [i for i, r in enumerate(calls, 1) if len(r.trace) != 1 or r.status != "success"]
    assert len(eventful) > BIG_ROWS
    big = viz.LiveCharts(big=True)
    big.draw(batch)
    ax = big.figures["timeline"].axes[0]
    numbers = [int(t.get_text()) for t in ax.get_yticklabels()]
    assert len(numbers) == BIG_ROWS and set(numbers) <= set(eventful) and numbers == sorted(numbers)
    assert numbers[0] == eventful[0] and numbers[-1] > eventful[len(eventful) // 2]  # spread, not the first ones
    assert f"有重试、没成功或未执行的 {len(eventful)} 次里，均匀取 {BIG_ROWS} 次" in ax.get_title("left")
    assert f"{len(calls)} 次调用" in ax.get_title("left") and ax.get_ylabel() == Y_LABEL
    assert not [t for t in ax.texts if t.get_gid() in ("wait-label", "not-run-label")]  # nothing over the bars
    assert ax.get_xlim()[0] <= 0 and drawn_attempts(big.figures["timeline"]).total() == sum(
        len(calls[i - 1].trace) for i in numbers)
    normal = viz.LiveCharts()
    normal.draw(batch)
    assert normal.timeline.ax.get_ylim() == (len(calls) - 0.5, -0.5)  # on a laptop every call has its row


def test_the_failed_attempts_are_named_in_chinese_like_the_key_beside_them(batch):
    from toolkit.viz.style import CODE_LABELS
    from toolkit.results import ErrorCode

    assert set(ErrorCode) <= set(CODE_LABELS)
    assert all(re.search(r"[\u4e00-\u9fff]", label) for label in CODE_LABELS.values())
    for chart in (viz.call_stats(batch), viz.LiveCharts(big=True).stats.update(batch).figure):
        errors = [ax for ax in chart.axes if (ax.get_title("left") or "").startswith("失败的尝试")][0]
        labels = [t.get_text() for t in errors.get_yticklabels()]
        assert labels and all(re.search(r"[\u4e00-\u9fff]", t) for t in labels), labels
        assert not [t for t in labels if re.fullmatch(r"[A-Z_]+", t)]


def test_live_charts_as_svg_are_the_same_bytes_for_the_same_data(batch):
    first, second = viz.LiveCharts(big=True, format="svg"), viz.LiveCharts(big=True, format="svg")
    one, two = first.draw(batch), second.draw(batch)
    assert one == two and one["timeline"].startswith(b"<?xml") and b"<text" not in one["stats"]  # text as outlines
    with pytest.raises(ValueError, match="format"):
        viz.LiveCharts(format="jpeg")
