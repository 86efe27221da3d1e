"""Fonts, colours and the fixed layout every chart is drawn with.

Fonts: importing toolkit.viz registers the CJK font subset shipped in toolkit/fonts
(TRL Sans CJK SC, a subset of Noto Sans CJK SC under the SIL Open Font License),
prefers a system CJK font where one is installed, and sets `axes.unicode_minus` to
False. `setup_fonts(prefer_system=False)` forces the shipped font.

Layout: no chart asks matplotlib to lay it out. Constrained layout draws a figure
twice and measures every text on the way; a chart here places its axes in inches
from the figure's edges (`place`), pins titles and axis labels (`pin_labels`, rc
`axes.titley`), sizes label margins from the text's length (`text_inches`) and
keeps one Agg canvas per figure, so showing a figure draws it once and drawing it
again reuses the renderer and its cache of text sizes.

Presentation mode (`big=True` in the failure panel's charts: toolkit.widgets.presentation):
every font is BIG_SCALE times larger and at least BIG_MIN_PT, the margins that hold text grow
with it, and the figure is BIG_WIDTH inches wide, so its text stays readable from the back of
a room when the picture is shown at the width of a notebook (see `font_pt`).
"""
from __future__ import annotations

import io
import math
import unicodedata
from pathlib import Path
from typing import Any, get_args

import matplotlib
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from ..backoff import Jitter
from ..results import ErrorCode

__all__ = [
    "setup_fonts", "font_family", "rc", "ChartFigure", "new_figure", "place", "pin_labels", "text_inches",
    "empty_state", "fmt_seconds", "SHIPPED_FONT", "SHIPPED_FAMILY", "SYSTEM_CJK_FAMILIES", "DPI", "WIDTH",
    "OUTCOME_COLORS", "OUTCOME_LABELS", "NOT_RUN", "NOT_RUN_COLOR", "NOT_RUN_LABEL", "INSTANT_LABEL",
    "WAIT_COLOR", "RETRY_AFTER_COLOR", "DEADLINE_COLOR", "JITTER_MODES", "JITTER_LABELS",
    "BIG_SCALE", "BIG_MIN_PT", "BIG_WIDTH", "font_pt", "smallest_text_pt", "CODE_LABELS", "code_label",
]

# --- fonts ---------------------------------------------------------------------------

SHIPPED_FONT = Path(__file__).resolve().parent.parent / "fonts" / "TRLSansCJKsc-Regular.otf"
SHIPPED_FAMILY = "TRL Sans CJK SC"
SYSTEM_CJK_FAMILIES = (
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Microsoft YaHei", "PingFang SC",
    "Hiragino Sans GB", "Heiti SC", "SimHei",
)
_font: dict[str, Any] = {"family": None, "registered": False}


def setup_fonts(prefer_system: bool = True) -> str:
    """Register the shipped CJK subset and make a CJK font matplotlib's first sans-serif.

    With prefer_system (the default) an installed system CJK font wins; with
    prefer_system=False the shipped subset is used even where one is installed (tests
    use this to prove the shipped font covers every label). Sets axes.unicode_minus
    to False (an ASCII hyphen-minus renders in every font). Returns the family used.
    """
    if not _font["registered"]:
        font_manager.fontManager.addfont(str(SHIPPED_FONT))
        _font["registered"] = True
    family = SHIPPED_FAMILY
    if prefer_system:
        installed = {entry.name for entry in font_manager.fontManager.ttflist}
        family = next((name for name in SYSTEM_CJK_FAMILIES if name in installed), SHIPPED_FAMILY)
    _font["family"] = family
    chain = _font_chain()
    ours = set(chain) | {SHIPPED_FAMILY, *SYSTEM_CJK_FAMILIES}  # a second call replaces, not stacks, our choice
    rest = [name for name in matplotlib.rcParams["font.sans-serif"] if name not in ours]
    # matplotlib falls back glyph by glyph only along an explicit family list, not inside "sans-serif"
    matplotlib.rcParams["font.family"] = chain + ["sans-serif"]
    matplotlib.rcParams["font.sans-serif"] = chain + rest
    matplotlib.rcParams["axes.unicode_minus"] = False
    return family


def font_family() -> str:
    """The CJK font family the charts use (see setup_fonts)."""
    return _font["family"] or setup_fonts()


def _font_chain() -> list[str]:
    # every family in the chain is looked up for every text drawn, so it stays short: the CJK family
    # (a system one covers more than the shipped subset), then DejaVu Sans for symbols a CJK font may lack
    return [_font["family"] or SHIPPED_FAMILY, "DejaVu Sans"]


def rc(big: bool = False) -> dict[str, Any]:
    """rcParams every chart is built under, whatever the caller changed since import (big: presentation
    mode's font sizes, see font_pt)."""
    return {"font.family": _font_chain(), "font.sans-serif": _font_chain(), "axes.unicode_minus": False,
            "font.size": font_pt(9, big), "axes.titlesize": font_pt(10, big), "axes.labelsize": font_pt(9, big),
            "legend.fontsize": font_pt(8, big), "xtick.labelsize": font_pt(8, big),
            "ytick.labelsize": font_pt(8, big),
            "axes.titley": 1.0, "axes.titlepad": 4.0}  # a title at a fixed height: nothing under it is measured


# --- presentation mode -----------------------------------------------------------------------

BIG_SCALE = 1.35   # fonts and the margins around text, in presentation mode
BIG_MIN_PT = 10.0  # no text smaller than this in presentation mode
BIG_WIDTH = 6.0    # inches: the same pictures in less width, so the text is larger where they are shown


def font_pt(size: float, big: bool = False) -> float:
    """A chart's font size in points: `size` as it is, or in presentation mode BIG_SCALE times it and at
    least BIG_MIN_PT. A BIG_WIDTH-inch chart shown 800 px wide draws 1 pt as 800 / (6 * 72) = 1.85 px,
    so its smallest text is 18.5 px on the page."""
    return max(size * BIG_SCALE, BIG_MIN_PT) if big else size


def smallest_text_pt(fig: Figure) -> float:
    """The size in points of the smallest visible, non-empty text in `fig` (tick labels included,
    as drawn last); inf for a figure without text."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.get_figure() is not None]
    return min(sizes, default=math.inf)


# --- colours and words -------------------------------------------------------------------

OUTCOME_COLORS = {
    "ok": "#3a9d5d",         # green
    "partial": "#e8a33d",    # amber
    "retryable": "#e4572e",  # orange-red
    "fatal": "#8e1b1b",      # dark red
    "timeout": "#7b5ea7",    # purple
}
OUTCOME_LABELS = {
    "ok": "成功", "partial": "部分成功", "retryable": "可重试错误", "fatal": "不可重试错误",
    "timeout": "超时（被截断）",
}
NOT_RUN = "not_run"  # a call that never ran its code: refused by an open circuit breaker or by the argument check
NOT_RUN_COLOR = "#9aa0a6"
NOT_RUN_LABEL = "未执行（熔断拦下/参数被拒）"
INSTANT_LABEL = "耗时约为 0 的尝试（圆点）"
JITTER_MODES: tuple[str, ...] = get_args(Jitter)  # "none", "full", "equal", "decorrelated"
JITTER_LABELS = {"none": "无抖动 none", "full": "全抖动 full", "equal": "等分抖动 equal",
                 "decorrelated": "去相关抖动 decorrelated"}
# what a chart calls an error code (a failed attempt's bar, a call that never ran): Chinese, as the key beside it
CODE_LABELS: dict[str, str] = {
    ErrorCode.TIMEOUT: "超时", ErrorCode.CONNECTION: "连接中断", ErrorCode.RATE_LIMITED: "限流 429",
    ErrorCode.SERVER_ERROR: "服务错误 500", ErrorCode.BAD_GATEWAY: "网关错误 502", ErrorCode.UNAVAILABLE: "服务不可用 503",
    ErrorCode.TRANSIENT: "临时错误", ErrorCode.CIRCUIT_OPEN: "熔断拦下", ErrorCode.BAD_REQUEST: "请求有误 400",
    ErrorCode.UNAUTHORIZED: "认证失败 401", ErrorCode.FORBIDDEN: "禁止访问 403", ErrorCode.NOT_FOUND: "找不到 404",
    ErrorCode.CONFLICT: "冲突 409", ErrorCode.HTTP_ERROR: "其他 HTTP 错误", ErrorCode.PERMISSION_DENIED: "权限不足",
    ErrorCode.INVALID_ARGUMENTS: "参数错误", ErrorCode.INVALID_ARGUMENTS_JSON: "参数不是合法 JSON",
    ErrorCode.BAD_TOOL_SCHEMA: "工具定义有误", ErrorCode.UNKNOWN_TOOL: "没有这个工具", ErrorCode.REPEATED_CALL: "重复调用",
    ErrorCode.TOOL_FAILURE_LIMIT: "连续失败到上限", ErrorCode.TOOL_ERROR: "工具出错", ErrorCode.FATAL: "不可重试错误",
    ErrorCode.UNKNOWN: "未知错误", ErrorCode.PLUGIN_ERROR: "插件出错", ErrorCode.APPROVAL_DENIED: "未获批准",
    "PARTIAL": "部分结果",
}


def code_label(code: str | None) -> str:
    """The chart's Chinese name for an error code (a tool's own code, unknown here, as it is)."""
    return CODE_LABELS.get(str(code or ErrorCode.UNKNOWN), str(code))


WAIT_COLOR = "#6b7280"
RETRY_AFTER_COLOR = "#1f6fb2"
DEADLINE_COLOR = "#c1121f"

DPI = 90
WIDTH = 8.0


def fmt_seconds(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.0f}s"
    if seconds >= 1:
        return f"{seconds:.1f}s"
    return f"{seconds * 1000:.0f}ms"


# --- figures with a fixed layout ------------------------------------------------------------

class ChartFigure(Figure):
    """A Figure that shows itself as PNG in any notebook front end, without pyplot.

    The charts are never registered with pyplot (nothing is shown twice, nothing
    leaks between cells); `_repr_png_` lets IPython display one that is a cell's last
    expression whatever matplotlib backend is active. Each keeps its own Agg canvas,
    so every savefig reuses one renderer and its cache of text sizes.
    """

    def __init__(self, *args: Any, big: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.big = big
        FigureCanvasAgg(self)

    def draw(self, renderer: Any) -> None:
        with matplotlib.rc_context(rc(self.big)):  # ticks are made while drawing: they read the rcParams then
            super().draw(renderer)

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", metadata={"Software": None})
        return buffer.getvalue()


def new_figure(height: float, width: float = WIDTH, dpi: int = DPI, big: bool = False) -> ChartFigure:
    """A ChartFigure of that size (inches) with no layout engine: the chart places its axes itself
    (big: drawn with presentation mode's font sizes)."""
    with matplotlib.rc_context(rc(big)):
        return ChartFigure(figsize=(width, height), dpi=dpi, big=big)


def place(ax: Any, left: float, bottom: float, width: float, height: float) -> None:
    """Put `ax` at a rectangle given in inches from the figure's bottom-left corner."""
    fig_w, fig_h = ax.get_figure().get_size_inches()
    ax.set_position((left / fig_w, bottom / fig_h, max(width, 0.1) / fig_w, max(height, 0.1) / fig_h))


def pin_labels(ax: Any, xlabel_in: float = 0.32, ylabel_in: float = 0.4) -> None:
    """Fixed places for the axis labels, in inches from the axes' edges: a label matplotlib places itself
    costs a measurement of every tick label on every draw."""
    width, height = ax.get_position().size * ax.get_figure().get_size_inches()
    ax.xaxis.set_label_coords(0.5, -xlabel_in / height)
    ax.yaxis.set_label_coords(-ylabel_in / width, 0.5)


def text_inches(text: str, size_pt: float) -> float:
    """About how wide `text` is at `size_pt` (the widest of its lines): a CJK character is one em, any
    other about 0.6 em. Margins are sized from this instead of measuring the text."""
    def line(s: str) -> float:
        return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in s)
    return max((line(part) for part in str(text).split("\n")), default=0.0) * size_pt / 72.0


def empty_state(message: str, title: str, height: float = 2.2) -> ChartFigure:
    """An empty-state figure: one frame with `message` in the middle (`fig.empty_state` is True)."""
    fig = new_figure(height)
    with matplotlib.rc_context(rc()):
        ax = fig.add_axes((0.02, 0.05, 0.96, 0.8))
        ax.set_title(title, loc="left")
        ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#555555",
                fontsize=11)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.empty_state = True
    return fig


def finite(*values: float) -> bool:
    """Whether every value is a real, finite number (no NaN, no infinity)."""
    try:
        return all(math.isfinite(v) for v in values)
    except TypeError:
        return False
