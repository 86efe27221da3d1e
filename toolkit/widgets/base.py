"""What every panel shares: a root widget, a text repr for static notebooks, a run guard, small HTML helpers."""
from __future__ import annotations

import html
import threading
from typing import Any, Callable

import ipywidgets as W

from ..results import safe_str

__all__ = ["Panel", "RunPanel", "button", "cell", "table", "MARKS"]

# status marks that need no emoji font: pass, fail, not run, warning
MARKS = {"pass": "\u2714", "fail": "\u2718", "none": "\u25cb", "warn": "\u26a0"}


def cell(text: Any, limit: int = 80) -> str:
    """`text` as one escaped line of at most `limit` characters (secrets redacted)."""
    return html.escape(" ".join(safe_str(text, limit).split()))


def table(headers: list[str], rows: list[list[Any]], nowrap: tuple[int, ...] = ()) -> str:
    """An HTML table; the columns in `nowrap` never break their text."""
    def style(i: int) -> str:
        return "padding:2px 8px;vertical-align:top" + (";white-space:nowrap" if i in nowrap else "")
    head = "".join(f"<th style='text-align:left;{style(i)}'>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td style='{style(i)}'>{cell(v, 120)}</td>" for i, v in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table style='border-collapse:collapse;font-size:13px'><tr>{head}</tr>{body}</table>"


def button(description: str, icon: str, handler: Callable[[], Any], style: str = "") -> W.Button:
    widget = W.Button(description=description, icon=icon, button_style=style)
    widget.on_click(lambda _: handler())
    return widget


class Panel:
    """A root widget, a text repr for static notebooks, a run guard.

    Runs are numbered by a generation counter: a Run or Reset bumps it, and the
    results of an older run that finishes late are dropped instead of shown.
    """

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
