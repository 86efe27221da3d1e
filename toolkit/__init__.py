"""Tool Result Lab: what an LLM agent does after a tool returns.

The names the course teaches live here; everything else stays importable from
its own module (toolkit.results, toolkit.wire, toolkit.fitting, ...). The road
a tool call travels: wire (the model's call read once) -> registry (name and
arguments checked) -> executor (retry, breaker, budget; the ToolResult, its
data budgeted and redacted once) -> decisions (what to do next) -> messages
(the tool message, with the decision in it) -> the model; ARCHITECTURE.md
follows one tool call along it, function by function.
Importing this package loads only the standard library: the model side
(openai), charts (matplotlib) and widgets (ipywidgets) load when first used.
"""
from .backoff import Backoff
from .breaker import CircuitBreaker
from .clock import SimulatedClock, get_clock, use_clock
from .decisions import evaluate_tool_result
from .executor import ToolExecutor
from .faults import HTTPStatusError, inject_faults
from .hooks import ToolEvent
from .messages import format_tool_message
from .parsing import estimate_tokens, parse_tool_result
from .registry import Tool, ToolRegistry
from .results import (ErrorCode, FatalToolError, PartialResult, RetryableToolError, ToolResult, classify_error,
                      error_from_envelope)
from .retry import Attempt, RetryBudget, RetryPolicy, call_tool_with_retry
from .shrink import dumps, shrink_json
from .task_context import TaskContext, split_task_context
from .truncate import smart_truncate
from .wire import FORMATS, parse_tool_call

__version__ = "0.1.0"

# Names whose modules load heavier libraries (openai, python-dotenv, jsonschema through the tools):
# resolved on first use, so `import toolkit` stays fast.
_LAZY = {
    "run_agent": "toolkit.agent",
    "check_answer": "toolkit.verify",
    "detect_instructions": "toolkit.safety",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    # time
    "SimulatedClock", "use_clock", "get_clock",
    # the model's call, and the tools it may call
    "parse_tool_call", "FORMATS", "ToolRegistry", "Tool",
    # results and errors (chapters 01, 03)
    "ToolResult", "PartialResult", "ErrorCode", "classify_error", "error_from_envelope", "RetryableToolError",
    "FatalToolError", "HTTPStatusError", "inject_faults",
    # retrying (03)
    "call_tool_with_retry", "RetryPolicy", "Backoff", "RetryBudget", "CircuitBreaker", "Attempt",
    # the executor and its one budget pass (06, 01, 02)
    "ToolExecutor", "ToolEvent", "parse_tool_result", "smart_truncate", "shrink_json", "estimate_tokens", "dumps",
    # the decision, then the message (05, 04)
    "evaluate_tool_result", "format_tool_message", "TaskContext", "split_task_context",
    # the agent, the answer check, untrusted output (07, 08)
    *_LAZY,
]
