"""What every panel shares: a root widget, a text repr for static notebooks, a run guard, small HTML helpers,
presentation mode (`presentation(True)`: larger text for a projector) and `Reveal` (an answer behind a button)."""
from __future__ import annotations

import html
import threading
import weakref
from typing import Any, Callable

import ipywidgets as W

from ..redaction import safe_str

__all__ = ["Panel", "RunPanel", "Reveal", "button", "cell", "table", "presentation", "MARKS", "BIG_TEXT_PX"]

BIG_TEXT_PX = 20  # presentation mode: the panels' text (JupyterLab's widgets draw 13 px)
_MODE = {"big": False}
_PANELS: "weakref.WeakSet[Panel]" = weakref.WeakSet()

# One stylesheet every panel carries (the same text, so the page holds it once per panel, harmlessly):
# readouts of a fixed width (a typed value never moves its column), and presentation mode's sizes through
# the variables ipywidgets draws its controls with; in a JupyterLab notebook showing a panel in presentation
# mode, the answers folded in its Markdown (<details>) open at the panels' size too.
PANEL_CSS = f"""<style>
.trl-panel h3 {{ margin: 0.2em 0; }}
.trl-panel .widget-readout {{ width: 3.6em; min-width: 3.6em; max-width: 3.6em; overflow: hidden;
  text-align: right; }}
.trl-big {{ --jp-widgets-font-size: {BIG_TEXT_PX}px; --jp-widgets-inline-height: 40px;
  --jp-widgets-inline-label-width: 220px; font-size: {BIG_TEXT_PX}px; line-height: 1.4; }}
.trl-big .widget-label, .trl-big .widget-html-content, .trl-big .widget-readout, .trl-big button,
.trl-big select, .trl-big input, .trl-big .widget-label-basic {{ font-size: {BIG_TEXT_PX}px; }}
.trl-big .widget-html-content, .trl-big .widget-label, .trl-big .widget-label-basic {{ line-height: 1.4; }}
.trl-big table {{ font-size: {BIG_TEXT_PX}px !important; }}
.trl-big .trl-key div {{ font-size: {BIG_TEXT_PX - 2}px !important; line-height: 1.6 !important; }}
.trl-big pre, .trl-big .jp-RenderedText pre {{ font-size: {BIG_TEXT_PX - 2}px; }}
.jp-Notebook:has(.trl-big) .jp-RenderedMarkdown details {{ font-size: {BIG_TEXT_PX}px; line-height: 1.5; }}
.trl-big h3 {{ font-size: {round(BIG_TEXT_PX * 1.4)}px; }}
.trl-big .noUi-handle {{ transform: scale(1.4); }}
</style>"""

# status marks that need no emoji font: pass, fail, not run, warning
MARKS = {"pass": "\u2714", "fail": "\u2718", "none": "\u25cb", "warn": "\u26a0"}


def cell(text: Any, limit: int = 80) -> str:
    """`text` as one escaped line of at most `limit` characters (secrets redacted)."""
    return html.escape(" ".join(safe_str(text, limit).split()))


def table(headers: list[str], rows: list[list[Any]], nowrap: tuple[int, ...] = ()) -> str:
    """An HTML table as wide as its panel; the columns in `nowrap` never break their text (and never
    shrink below it), the others break anywhere rather than push the table wider than the page."""
    def style(i: int) -> str:
        return ("padding:2px 8px;vertical-align:top;text-align:left;"
                + ("white-space:nowrap;width:1%" if i in nowrap else "overflow-wrap:anywhere"))
    head = "".join(f"<th style='{style(i)}'>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td style='{style(i)}'>{cell(v, 120)}</td>" for i, v in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table style='border-collapse:collapse;font-size:13px;width:100%'><tr>{head}</tr>{body}</table>"


def button(description: str, icon: str, handler: Callable[[], Any], style: str = "") -> W.Button:
    widget = W.Button(description=description, icon=icon, button_style=style)
    widget.on_click(lambda _: handler())
    return widget


def presentation(on: bool = True) -> None:
    """Presentation mode for the whole notebook: every panel made after this call, and every panel
    already shown, draws its text at BIG_TEXT_PX px and its charts with presentation mode's sizes
    (toolkit.viz.style.font_pt, as SVG). `presentation(False)` turns it off.
    A panel's own "大字" toggle (or `big=` when made) still switches that panel alone."""
    _MODE["big"] = bool(on)
    for panel in list(_PANELS):
        panel.set_big(bool(on))


class Reveal:
    """An answer kept for the instructor: a button; pressing it shows `text`, pressing it again hides it.

    Nothing of `text` is in the page (or in a static notebook's text) until the button is pressed.
    `shown` says whether it is showing; `toggle()` is the button.
    """

    def __init__(self, text: str, label: str = "显示备查") -> None:
        self.text, self.label, self.shown = text, label, False
        self.output = W.Output()
        self.button = button(label, "eye", self.toggle)
        self.button.layout.width, self.button.layout.align_self = "auto", "flex-start"  # its whole label, no wider
        self.widget = W.VBox([self.button, self.output], _dom_classes=["trl-reveal"])
        if _MODE["big"]:  # sized by the stylesheet the panels on the page carry
            self.widget.add_class("trl-big")

    def toggle(self) -> None:
        self.shown = not self.shown
        if self.shown:
            self.output.append_stdout(self.text if self.text.endswith("\n") else self.text + "\n")
            self.button.description, self.button.icon = "收起", "eye-slash"
        else:
            self.output.outputs = ()
            self.button.description, self.button.icon = self.label, "eye"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return f"[{self.label}]（按下按钮才显示）"


class Panel:
    """A root widget, a text repr for static notebooks, a run guard.

    Runs are numbered by a generation counter: a Run or Reset bumps it, and the
    results of an older run that finishes late are dropped instead of shown.
    """

    title = ""
    widget: W.Widget

    def __init__(self, big: bool | None = None) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self.state: dict[str, Any] = {"runs": 0, "running": False, "error": None, "generation": 0}
        self.big = _MODE["big"] if big is None else bool(big)
        self.big_toggle = W.ToggleButton(value=self.big, description="大字", icon="search-plus",
                                         tooltip="投影用的大字模式（整本：toolkit.widgets.presentation(True)）",
                                         layout=W.Layout(width="auto"))
        self.big_toggle.observe(lambda change: self.set_big(change["new"]), names="value")
        self._sizes: list[tuple[list[W.Widget], tuple[str, str], tuple[str, str]]] = []

    def _sized(self, controls: list[W.Widget], description: tuple[str, str], width: tuple[str, str]) -> None:
        """Give `controls` their label width and width, (normal, presentation mode), now and at each switch."""
        self._sizes.append((controls, description, width))
        self._apply_sizes()

    def _apply_sizes(self) -> None:
        for controls, description, width in self._sizes:
            for control in controls:
                control.style.description_width = description[self.big]
                control.layout.width = width[self.big]

    def _root(self, children: list[W.Widget]) -> W.VBox:
        """The panel's root: its title and "大字" toggle, then `children`, under the shared stylesheet,
        classed for presentation mode."""
        header = W.HBox([W.HTML(f"<h3>{html.escape(self.title)}</h3>"), self.big_toggle],
                        layout=W.Layout(align_items="center", justify_content="space-between"))
        root = W.VBox([W.HTML(PANEL_CSS), header, *children])
        root.add_class("trl-panel")
        if self.big:
            root.add_class("trl-big")
        _PANELS.add(self)  # a panel whose making failed never gets here: presentation() skips it
        return root

    def set_big(self, on: bool) -> None:
        """Presentation mode for this panel alone: larger text (and, where the panel draws charts, larger
        chart text); `big` says which mode it is in."""
        self.big = bool(on)
        self.big_toggle.value = self.big
        if self.big:
            self.widget.add_class("trl-big")
        else:
            self.widget.remove_class("trl-big")
        self._apply_sizes()
        self._resize()

    def _resize(self) -> None:
        """What a panel changes besides its text and controls' sizes when presentation mode changes."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The widget, and for a front end with no live widgets (a notebook opened before Run All, a static
        page) a picture of what the panel shows (`_picture`) and its one-line text."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle.update(self._picture())
        bundle["text/plain"] = self._text()
        return bundle

    def _picture(self) -> dict[str, str]:
        """{mime type: data} of what the panel shows now, for front ends without live widgets."""
        return {}

    def _html_picture(self, *parts: str) -> dict[str, str]:
        return {"text/html": f"<div><h3>{html.escape(self.title)}</h3>{''.join(parts)}</div>"}

    def _text(self) -> str:
        return self.title

    def __repr__(self) -> str:
        return self._text()

    def _start(self) -> int:
        with self._lock:
            self._generation += 1
            self.state.update(running=True, generation=self._generation)
            return self._generation

    def _run_label(self, note: str = "") -> str:
        """"第 N 次运行" (and an HTML `note`) for the run being committed: a Run with unchanged settings
        still shows it ran."""
        return f"<b>第 {self.state['runs'] + 1} 次运行</b>{note}："

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
                message.value = (f"<span style='color:#b00'>{MARKS['fail']} 运行出错："
                                 f"{cell(self.state['error'], 300)}</span>")

    def _current(self, generation: int) -> bool:
        """Whether `generation` is still the newest run (no Run or Reset came after it)."""
        with self._lock:
            return generation == self._generation

    def _invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self.state.update(running=False, error=None, generation=self._generation)


class RunPanel(Panel):
    """A panel with Run and Reset: its text is the last run's one-line summary.

    Scenes: `_scenes(presets, known, controls)` (in a subclass's __init__) checks each preset
    ({button label: {setting: value}}, settings from `known`), makes one button per preset, and
    watches `controls`: moving one by hand means the panel is no longer at that scene, and the
    summary says so at once ("（场景二；之后已手动调整，按“运行”更新）": the charts are still
    the scene's), and the next runs' summaries say "（已手动调整）" until a scene button is pressed.
    `apply_preset(label)` sets every control (`_set_controls`; settings a preset leaves out are
    the panel's own, `_defaults`) and runs; `preset` is the label the controls are at, `adjusted`
    whether they were moved by hand since the last scene. A subclass shows a run's summary with
    `_show_summary(text)`.
    """

    last_summary = ""
    presets: dict[str, dict] = {}
    preset: str | None = None
    adjusted = False
    summary: W.HTML
    preset_buttons: dict[str, W.Button] = {}
    _defaults: dict[str, Any] = {}
    _applying = False

    def _scenes(self, presets: dict[str, dict] | None, known: tuple[str, ...], controls: list[W.Widget]) -> list:
        """Check and keep `presets`; returns the row of scene buttons to show ([] without presets)."""
        self.presets = dict(presets or {})
        for name, preset in self.presets.items():
            unknown = set(preset) - set(known)
            if unknown:
                raise ValueError(f"preset {name!r}: unknown setting(s) {sorted(unknown)}; choose from {list(known)}")
        for control in controls:
            control.observe(self._moved, names="value")
        self.preset_buttons = {name: button(name, "", lambda name=name: self._clicked_preset(name))
                               for name in self.presets}
        for widget in self.preset_buttons.values():
            widget.layout.width = "auto"  # the scene's whole name, never "场景一 ..."
        if not self.presets:
            return []
        return [W.HBox([W.HTML("<b>场景：</b>"), *self.preset_buttons.values()],
                       layout=W.Layout(flex_flow="row wrap"))]

    def apply_preset(self, name: str, run: bool = True) -> str:
        """Set every control to preset `name` and, with `run`, run; returns the summary line (or "" without
        `run`). Raises KeyError for a preset the panel does not have."""
        preset = {**self._defaults, **self.presets[name]}
        self._applying = True
        try:
            self._set_controls(preset)
        finally:
            self._applying = False
        self._mark(name)
        self.adjusted = False
        return self.run() if run else ""

    def _set_controls(self, settings: dict) -> None:
        raise NotImplementedError

    def _scene_note(self) -> str:
        """The scene the controls are at, for the summary: "（场景二）", "（已手动调整）" after a scene's
        controls were moved by hand, or "" (no scene pressed yet)."""
        if self.preset:
            return f"（{html.escape(self.preset)}）"
        return "（已手动调整）" if self.adjusted else ""

    def _show_summary(self, text: str) -> None:
        """The summary of the run being committed: "第 N 次运行（scene）：text"."""
        self._shown = (self.state["runs"] + 1, self.preset, text)
        self.summary.value = self._run_label(self._scene_note()) + html.escape(text)

    def _mark(self, name: str | None) -> None:
        self.preset = name
        for label, widget in self.preset_buttons.items():
            widget.button_style = "info" if label == name else ""

    def _moved(self, _: Any) -> None:
        if self._applying or self.preset is None:
            return
        self._mark(None)
        self.adjusted = True
        shown = getattr(self, "_shown", None)
        if shown and shown[1] and self.last_summary == shown[2]:  # the summary on show is a scene's run
            runs, scene, text = shown
            self.summary.value = (f"<b>第 {runs} 次运行</b>（{html.escape(scene)}；之后已手动调整，"
                                  f"按“运行”更新）：{html.escape(text)}")

    def _clicked_preset(self, name: str) -> None:
        """A scene's button: an error is already shown in the panel and kept in state["error"]."""
        try:
            self.apply_preset(name)
        except Exception:
            pass

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
