"""The agent loop and its command line, one module per job.

loop: run_agent and the loop itself (with the plug-in points format_message,
evaluate, check); record: AgentRun, its summary, transcript and table rows; gates: a person's yes
before a write and clearing before a model call; sync: running
tool batches from sync code and inside Jupyter's event loop (Ctrl-C cancels);
cli: `python -m toolkit.agent "问题"`; compare: whether the [TASK_CONTEXT] block helps
the model in .env (`compare_task_context`, skipped offline). The step splitter and the
[TASK_CONTEXT] block live in toolkit.task_context, the model-error wording in
toolkit.llm.errors.
"""
from __future__ import annotations

from ..task_context import split_steps
from .cli import main
from .compare import TaskContextComparison, compare_task_context
from .gates import resume
from .loop import SYSTEM_PROMPT, Check, Evaluate, FormatMessage, run_agent, task_context_for
from .record import AgentRun

__all__ = ["SYSTEM_PROMPT", "AgentRun", "run_agent", "resume", "split_steps", "task_context_for", "main",
           "FormatMessage", "Evaluate", "Check", "compare_task_context", "TaskContextComparison"]
