"""Live panels for the classroom (ipywidgets 8): inject faults, run the agent, move a budget, pick a result.

One view per module: `FailurePanel()` (failure.py) sends a batch of tool calls through a
real ToolExecutor with faults injected at the rates its sliders say, on a simulated
clock (toolkit.simulation.simulate_batch), and redraws the retry timeline and the call
statistics (toolkit.viz.LiveCharts: the notebook's own charts, kept and updated in
place: bench row 8). `AgentPanel()` (agent.py) runs the agent loop with a fault in the
sales tool or a misbehaving offline model and shows the transcript and the answer check.
`ApprovalPanel(run)` (approval.py) approves or denies a paused run's pending write.
`BudgetPlayground(value)` (budget.py) shows what smart_truncate / parse_tool_result keep
under a budget; `DecisionPicker()` (decisions.py) shows which action
evaluate_tool_result picks for a result, and why. base.py holds what they share.

Presentation mode, for a projector: `presentation(True)` once at the top of a notebook (or
`FailurePanel(big=True)`, or a panel's "大字" toggle) draws the panels' text at 20 px and the
failure panel's charts with larger text, as SVG shown as wide as the panel, so nothing blurs.
`FailurePanel(presets={...})` puts one button per classroom scene that sets every control and
runs; `Reveal(text)` keeps an answer behind a button until the instructor asks for it.

Every panel displays itself (`display(panel)`), shows figures as PNG in an
`ipywidgets.Image` (so JupyterLab, VS Code and a static notebook all show them),
and keeps what it did in plain attributes (`state`, `last_summary`, `executor`,
`figures`, `png`, ...) so tests and instructors can drive it from Python:
set a control's `.value`, call `.run()` / `.reset()`, read the attributes.

Run is synchronous: the batch runs to the end on its own event loop (in a helper
thread when the caller's thread already runs one, as a Jupyter kernel does:
toolkit.agent.sync.run_sync), then everything the panel shows is swapped in at once
under a lock. A second Run therefore starts only after the first has finished and
drawn; a Reset (or Run) from another thread while a run is in flight bumps a
generation counter, and the older run's results are dropped instead of drawn.
Importing this package does not load matplotlib: the failure panel does, when made.
"""
from __future__ import annotations

from .agent import MODEL_BEHAVIOURS, AgentPanel, answer_check
from .approval import ApprovalPanel
from .base import BIG_TEXT_PX, MARKS, Reveal, presentation
from .budget import BudgetPlayground
from .decisions import DecisionPicker
from .failure import FAULT_KINDS, SETTINGS, FailurePanel, colour_key, summarize_batch

__all__ = ["FailurePanel", "AgentPanel", "ApprovalPanel", "BudgetPlayground", "DecisionPicker", "Reveal",
           "presentation", "colour_key", "summarize_batch", "answer_check", "FAULT_KINDS", "SETTINGS",
           "MODEL_BEHAVIOURS", "MARKS", "BIG_TEXT_PX"]
