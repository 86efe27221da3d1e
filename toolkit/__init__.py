"""Tool Result Lab: what an LLM agent does after a tool returns.

The public names live here; the road a result travels is
results -> retry -> executor -> parsing -> messages -> decisions
(ARCHITECTURE.md follows one tool call along it).
Importing this package loads only the standard library: the model side
(openai), charts (matplotlib) and widgets (ipywidgets) load when first used.
"""
from .clock import RealClock, SimulatedClock, get_clock, set_clock, use_clock
from .decisions import evaluate_tool_result
from .breaker import CircuitBreaker
from .executor import ToolExecutor
from .registry import Tool, ToolRegistry
from .wire import ToolCall, parse_tool_call
from .faults import FAULTS, FaultyTool, HTTPStatusError, inject_faults
from .hooks import HookError, ToolEvent
from .messages import TaskContext, format_tool_message, split_task_context, with_task_context
from .fitting import fit_for_model
from .parsing import estimate_tokens, parse_tool_result, to_markdown_table
from .shrink import dumps, shrink_json
from .truncate import smart_truncate
from .results import (ErrorCode, ErrorInfo, FatalToolError, PartialResult, RetryableToolError, ToolError, ToolResult,
                      classify_error, error_from_envelope, redact, safe_str)
from .retry import Attempt, Backoff, RetryBudget, RetryOutcome, RetryPolicy, call_tool_with_retry
from .wire import FORMATS, WireFormat, register_format

__version__ = "0.1.0"

# Names whose modules load heavier libraries (openai, python-dotenv, jsonschema through the tools):
# resolved on first use, so `import toolkit` stays fast.
_LAZY = {
    "run_agent": "toolkit.agent", "AgentRun": "toolkit.agent",
    "make_client": "toolkit.llm", "load_settings": "toolkit.llm", "Settings": "toolkit.llm",
    "ConfigError": "toolkit.llm",
    "default_registry": "toolkit.tools", "analyze_sales_csv": "toolkit.tools",
    "check_answer": "toolkit.verify",
    "detect_instructions": "toolkit.safety",
    "ToolKnowledge": "toolkit.knowledge", "teach": "toolkit.knowledge",
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
    "Attempt", "Backoff", "CircuitBreaker", "ErrorCode", "ErrorInfo", "FAULTS", "FORMATS", "HookError", "FatalToolError", "FaultyTool",
    "HTTPStatusError", "PartialResult", "RealClock", "RetryBudget", "RetryOutcome", "RetryPolicy",
    "RetryableToolError", "SimulatedClock", "TaskContext", "Tool", "ToolCall", "ToolError", "ToolEvent", "ToolExecutor",
    "ToolRegistry", "ToolResult", "WireFormat", "call_tool_with_retry", "classify_error", "dumps", "error_from_envelope",
    "estimate_tokens", "evaluate_tool_result", "fit_for_model", "format_tool_message", "get_clock",
    "inject_faults", "parse_tool_call", "parse_tool_result", "redact", "register_format", "safe_str", "set_clock", "shrink_json",
    "smart_truncate", "split_task_context", "to_markdown_table", "use_clock", "with_task_context",
    *_LAZY,
]
