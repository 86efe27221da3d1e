"""An MCP CallToolResult read as the toolkit's tool envelope {status, data, source, error, retryable}.

The executor opens that envelope once (toolkit.results.unwrap_envelope), so a
result over MCP becomes a ToolResult on the same road as a local tool's:
- content blocks: text (JSON text decoded), image and audio (described, never
  their base64 bytes: the model cannot read them and they would fill its budget),
  embedded resources (text kept, a blob described) and resource links;
- isError: the toolkit's code and kind from `_meta["toolresultlab/error"]` when
  the server gives them, else TOOL_ERROR, fatal (a tool that said it failed is
  not retried blindly);
- structuredContent: checked against the tool's outputSchema; missing or not
  matching (or not checkable within the call's time limit) is a fatal
  INVALID_STRUCTURED_CONTENT (the data cannot be trusted).
Nothing here raises for what a server sends.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from .. import wording
from ..redaction import safe_str
from ..results import ErrorCode
from ..schemas import SCHEMA_CHECK_SECONDS, SchemaTooSlow, schema_problem, schema_validator

__all__ = ["APPROVAL_META", "ERROR_META", "KIND_META", "INVALID_STRUCTURED_CONTENT", "envelope_from_result",
           "error_envelope", "block_value"]

ERROR_META = "toolresultlab/error"  # {"code": ..., "retryable": bool} beside an isError result
KIND_META = "toolresultlab/kind"    # a tool's kind in the toolkit ("query" / "read" / "write")
APPROVAL_META = "toolresultlab/needs_approval"  # True when a call waits for a person's yes (toolkit.approval)
INVALID_STRUCTURED_CONTENT = "INVALID_STRUCTURED_CONTENT"


def error_envelope(code: str, message: str, retryable: bool, source: Any = None) -> dict:
    return {"status": "error", "data": None, "source": source,
            "error": {"code": str(code), "message": message}, "retryable": retryable}


def _size(data: Any) -> int | None:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError, TypeError):
        return None


def block_value(block: Any) -> Any:
    """What the model reads of one content block."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": block.mime_type, "bytes": _size(block.data),
                "note": "二进制内容没有发给模型，只给出类型和大小"}
    if kind == "resource":
        resource = block.resource
        value = {"type": "resource", "uri": str(resource.uri), "mime_type": resource.mime_type}
        text = getattr(resource, "text", None)
        if text is not None:
            return {**value, "text": text}
        return {**value, "bytes": _size(getattr(resource, "blob", None)), "note": "二进制资源没有发给模型"}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name,
                "description": block.description}
    return {"type": safe_str(kind, 40), "note": "不认识的内容块类型"}


def _decoded(text: str) -> Any:
    """JSON text as its value (an object or array), other text as it is."""
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's parser goes: text
            pass
    return text


def _content(blocks: list) -> Any:
    values = [block_value(block) for block in blocks]
    if len(values) == 1 and isinstance(values[0], str):
        return _decoded(values[0])
    return values


def _schema_problem(value: Any, schema: dict, seconds: float) -> str | None:
    """Why `value` cannot be trusted as `schema`'s data (one Chinese sentence), or None. The server's schema and
    its output are both untrusted: checked like a tool's argument schema (toolkit.schemas), within `seconds`."""
    try:
        problem = schema_problem(schema_validator(schema), value, seconds)
    except SchemaTooSlow:
        return f"structuredContent 没能在 {wording.seconds(seconds)} 秒内（调用时限剩下的时间）按 outputSchema 检查完（schema 过于复杂）"
    except Exception as exc:  # a broken outputSchema is the server's bug
        return f"工具的 outputSchema 本身无效（{safe_str(exc, 160)}）"
    return None if problem is None else f"structuredContent 不符合工具的 outputSchema（{problem[0]}: {problem[1]}）"


def envelope_from_result(result: Any, output_schema: dict | None = None, source: Any = None, *,
                         check_seconds: float = SCHEMA_CHECK_SECONDS) -> dict:
    """The toolkit's envelope for one `mcp.types.CallToolResult` (see the module's doc); structuredContent is
    checked against `output_schema` within `check_seconds` of real time (MCPServer gives the rest of the call's
    time limit): a check that takes longer makes the result INVALID_STRUCTURED_CONTENT."""
    blocks = list(getattr(result, "content", None) or [])
    if getattr(result, "is_error", False):
        meta = (getattr(result, "meta", None) or {}).get(ERROR_META)
        text = " ".join(v for v in map(block_value, blocks) if isinstance(v, str)) or "工具报告了错误，但没有说明原因"
        if isinstance(meta, dict) and meta.get("code"):
            return error_envelope(safe_str(meta["code"], 80), safe_str(text, 500), meta.get("retryable") is True,
                                  source)
        return error_envelope(ErrorCode.TOOL_ERROR, safe_str(text, 500), False, source)
    structured = getattr(result, "structured_content", None)
    if output_schema is not None:
        if structured is None:
            return error_envelope(INVALID_STRUCTURED_CONTENT, "工具声明了 outputSchema，却没有返回 structuredContent，"
                                  "结果不可信，不要据此回答", False, source)
        problem = _schema_problem(structured, output_schema, check_seconds)
        if problem is not None:
            return error_envelope(INVALID_STRUCTURED_CONTENT, f"{problem}，结果不可信，不要据此回答", False, source)
    data = structured if structured is not None else _content(blocks)
    return {"status": "ok", "data": data, "source": source, "error": None}
