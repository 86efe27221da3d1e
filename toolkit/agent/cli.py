"""`python -m toolkit.agent "问题"`: the command-line face of the loop.

stdout holds only the answer. stderr gets one Chinese line per problem: a
failure (then the exit code is 1, or 2 for bad usage), a note for each mistake
the model made and what the toolkit did about it (unknown tool, bad arguments,
repeated calls), and the answer check's verdict when the answer's figures are
not in the tool results (exit code unchanged unless --strict).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from ..redaction import redact, safe_str
from ..results import ErrorCode
from .record import AgentRun

__all__ = ["main", "EMPTY_QUESTION", "mistake_notes", "decode_text"]

EMPTY_QUESTION = '问题不能为空：请在命令后写上问题，例如 python -m toolkit.agent "哪个类别销售额最高？"'
BAD_ENCODING = "问题的编码无法识别：请用 UTF-8（或 GBK）编码输入问题"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.agent",
        description="让 Agent 调用工具回答问题（没有配置 .env 时使用离线替身模型）。")
    parser.add_argument("question", nargs="*", help="要问的问题；省略时从标准输入读取")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="在标准错误输出打印每一步（模型请求、工具结果、[任务进度 n/m]）")
    parser.add_argument("--max-turns", type=int, default=6, help="最多调用模型几轮（默认 6）")
    parser.add_argument("--mcp", action="store_true",
                        help="通过 MCP 调用工具：把 python -m toolkit.mcp.server 作为子进程启动，工具列表和每次调用都走 MCP")
    parser.add_argument("--strict", action="store_true", help="回答没有通过验收（数字不在工具结果里）时以退出码 1 结束")
    return parser


def decode_text(raw: bytes) -> str | None:
    """Bytes typed by a student: UTF-8 (a BOM allowed), else GB18030 (which covers GBK); None if neither."""
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return None


def _argument(word: str) -> str | None:
    """A command-line word; one that arrived in another encoding (surrogate-escaped bytes) is decoded again."""
    try:
        word.encode("utf-8")
        return word
    except UnicodeEncodeError:
        return decode_text(os.fsencode(word))


def _read_question(words: list[str]) -> str | None:
    """The question, stripped; None when it cannot be decoded."""
    if words:
        decoded = [_argument(w) for w in words]
        return None if any(w is None for w in decoded) else " ".join(decoded).strip()  # type: ignore[arg-type]
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        return input("请输入问题：").strip()
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text-only stdin (e.g. io.StringIO in a test)
        return sys.stdin.read().strip()
    text = decode_text(buffer.read())
    return None if text is None else text.strip()


def mistake_notes(run: AgentRun) -> list[str]:
    """One Chinese line per kind of mistake the model made, and what the toolkit did about it."""
    by_code: dict[str, list] = {}
    for result in run.tool_results:
        by_code.setdefault(result.error_code or "", []).append(result)
    notes = []
    if by_code.get(ErrorCode.UNKNOWN_TOOL):
        names = "、".join(dict.fromkeys(safe_str(r.name, 40) for r in by_code[ErrorCode.UNKNOWN_TOOL]))
        notes.append(f"注意：模型请求了不存在的工具 {names}；工具包没有执行，把“没有这个工具”的错误交还给模型。")
    bad = by_code.get(ErrorCode.INVALID_ARGUMENTS_JSON, []) + by_code.get(ErrorCode.INVALID_ARGUMENTS, [])
    if bad:
        kinds = "、".join(dict.fromkeys("不是合法 JSON" if r.error_code == ErrorCode.INVALID_ARGUMENTS_JSON
                                        else "不符合参数定义"
                                        for r in bad))
        notes.append(f"注意：模型发来的参数{kinds}（{len(bad)} 次）；工具包没有执行工具，把错误交还给模型让它修正。")
    if by_code.get(ErrorCode.REPEATED_CALL):
        notes.append(f"注意：模型用同样的参数重复调用同一个工具（{len(by_code[ErrorCode.REPEATED_CALL])} 次）；"
                     "工具包拦下了重复调用，没有再执行。")
    if by_code.get(ErrorCode.TOOL_FAILURE_LIMIT):
        names = "、".join(dict.fromkeys(safe_str(r.name, 40) for r in by_code[ErrorCode.TOOL_FAILURE_LIMIT]))
        notes.append(f"注意：工具 {names} 连续失败后模型仍在换着参数调用它；工具包不再执行，告诉模型别再试。")
    return notes


def _needs_check(run: AgentRun) -> bool:
    """Whether the answer should be checked: it was answered after a tool succeeded (the sales tool, or any
    other: every figure in an answer must come from a tool result)."""
    return run.ok and any(r.status != "error" for r in run.tool_results)


def answer_check(answer: str, results: list, question: str | None = None) -> Any:
    """check_answer over the tool results that did not fail (numbers in the question may be repeated)."""
    from ..verify import check_answer

    usable = [r for r in results if r.status != "error"] or results
    return check_answer(answer, *usable, question=question) if usable else None


def _check_line(run: AgentRun) -> str | None:
    verdict = run.check
    if verdict is None or getattr(verdict, "ok", True):
        return None
    problems = "；".join(safe_str(m, 120) for m in verdict.mismatches[:3])
    return f"注意：回答没有通过验收（{problems}）；这些数字不能当真，请以工具结果为准。"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m toolkit.agent "问题"`: print the answer; 0 answered, 1 failed, 2 bad usage.

    Every failure (configuration, endpoint unreachable, HTTP 401/429/5xx, a
    malformed reply, loop limit) is one redacted Chinese line on stderr, without a
    traceback. A question on stdin or in the arguments may be UTF-8 or GBK.
    """
    from ..llm import ConfigError
    from ..llm.errors import describe_model_error
    from .loop import run_agent

    args = _parser().parse_args(argv)
    try:
        question = _read_question(args.question)
    except (EOFError, KeyboardInterrupt):
        question = ""
    if question is None:
        return _fail(BAD_ENCODING, 2)
    if not question:
        return _fail(EMPTY_QUESTION, 2)
    if args.max_turns < 1:
        return _fail(f"--max-turns 必须至少为 1，收到 {args.max_turns}", 2)
    import openai

    server = registry = None
    if args.mcp:
        from ..mcp import MCPServer
        from ..tools import KNOWLEDGE  # noqa: F401  the served tools are the course's: their knowledge, by name
        server = MCPServer()
        try:
            registry = server.registry()
        except (ConnectionError, TimeoutError) as exc:
            server.close()
            return _fail(f"无法启动 MCP 服务器：{safe_str(exc, 300)}", 1)
        if args.verbose:
            print(f"[MCP] 工具来自 MCP 服务器（stdio 子进程）：{', '.join(registry.names)}", file=sys.stderr)
    try:
        run = run_agent(question, max_turns=args.max_turns, registry=registry)
    except ConfigError as exc:
        return _fail(f"配置有误：{safe_str(exc, 300)}", 1)
    except openai.OpenAIError as exc:  # raised before the loop, e.g. while building the client
        return _fail(describe_model_error(exc), 1)
    except OSError as exc:  # e.g. the offline model's server cannot open a port on 127.0.0.1
        return _fail(f"无法启动本地的离线模型服务：{safe_str(exc, 200)}", 1)
    except KeyboardInterrupt:
        return _fail("已中断。", 130)
    finally:
        if server is not None:
            server.close()
    if _needs_check(run):
        try:
            run.check = answer_check(run.answer, run.tool_results, run.question)
        except Exception:  # the check is advice: it never turns an answer into a traceback
            run.check = None
    transcript = run.render_transcript()
    if args.verbose and transcript:
        print(redact(transcript), file=sys.stderr)
    for note in mistake_notes(run):
        _fail(note, 0)
    if not run.ok:
        return _fail(run.answer, 1)
    print(redact(run.answer))
    line = _check_line(run)
    if line:
        _fail(line, 0)
        if args.strict:
            return 1
    return 0


def _fail(message: str, code: int) -> int:
    """Print one redacted line to stderr and return the exit code."""
    print(" ".join(redact(message).split()), file=sys.stderr)
    return code
