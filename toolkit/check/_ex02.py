"""Exercise 02: truncate_head_tail(text, max_chars) — head + tail at line boundaries, exact omitted count."""
from __future__ import annotations

import re
from typing import Callable

from ._core import Check, Exercise, Fail

MARKER = re.compile(r"\n…（已省略 (\d+) 字符）…\n")

REPORT = "\n".join(
    ["季度销售报告", "说明：本报告由 analyze_sales_csv 生成。", ""]
    + [f"第 {i:03d} 笔：类别 {'键盘鼠标显示器'[i % 3 * 2:i % 3 * 2 + 2]}，数量 {i % 7 + 1}" for i in range(1, 301)]
    + ["", "结论：销售额最高的类别是显示器（4495）。", "总计：9692"])


def _split(fn: Callable, text: str, max_chars: int) -> tuple[str, str, int, str]:
    out = fn(text, max_chars)
    if not isinstance(out, str):
        raise Fail(f"应该返回 str，你返回了 {type(out).__name__}")
    found = list(MARKER.finditer(out))
    if len(found) != 1:
        raise Fail(f"超长文本的结果里应恰好有一个标记「\\n…（已省略 N 字符）…\\n」，找到 {len(found)} 个："
                   f"{out[:60]!r}…{out[-60:]!r}")
    m = found[0]
    return out[:m.start()], out[m.end():], int(m.group(1)), out


def check_short(fn: Callable) -> None:
    for text in ("", "一行", "第一行\n第二行\n", "x" * 100):
        out = fn(text, 100)
        if out != text:
            raise Fail(f"长度不超过 max_chars 的文本应原样返回：输入 {text[:20]!r}，得到 {str(out)[:40]!r}")


def check_tail(fn: Callable) -> None:
    head, tail, _, _ = _split(fn, REPORT, 600)
    if "总计：9692" not in tail:
        raise Fail(f"结尾的「总计：9692」丢了：只保留开头会丢掉结论。结尾部分是 {tail[-60:]!r}")


def check_head(fn: Callable) -> None:
    head, tail, _, _ = _split(fn, REPORT, 600)
    if not head.startswith("季度销售报告"):
        raise Fail(f"开头的标题丢了：开头部分是 {head[:40]!r}")


def check_budget(fn: Callable) -> None:
    for max_chars in (120, 300, 600, 2000):
        out = fn(REPORT, max_chars)
        if not isinstance(out, str) or len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时结果有 {len(out)} 个字符（标记也算在内）")


def check_exact(fn: Callable) -> None:
    for max_chars in (120, 600, 2000):
        head, tail, n, _ = _split(fn, REPORT, max_chars)
        if not REPORT.startswith(head):
            raise Fail("开头部分必须是原文的前缀（不要 strip()，不要改字）")
        if not REPORT.endswith(tail):
            raise Fail("结尾部分必须是原文的后缀（不要 strip()，不要改字）")
        real = len(REPORT) - len(head) - len(tail)
        if real < 0:
            raise Fail("开头和结尾重叠了")
        if n != real:
            raise Fail(f"max_chars={max_chars}：标记说省略了 {n} 字符，实际省略 {real}")


def _at_line_start(text: str, i: int) -> bool:
    return i == 0 or i == len(text) or text[i - 1] == "\n"


def check_lines(fn: Callable) -> None:
    for max_chars in (120, 600, 2000):
        head, tail, _, _ = _split(fn, REPORT, max_chars)
        if not (head == "" or REPORT[len(head)] == "\n" or head.endswith("\n")):
            raise Fail(f"开头部分停在了一行的中间：…{head[-20:]!r}")
        if not _at_line_start(REPORT, len(REPORT) - len(tail)):
            raise Fail(f"结尾部分从一行的中间开始：{tail[:20]!r}…")


def check_random(fn: Callable) -> None:
    from hypothesis import HealthCheck, given, settings, strategies as st
    from hypothesis.reporting import with_reporter

    line = st.text(alphabet=st.sampled_from(list("销售额显示器abc019 ，。")), min_size=0, max_size=12)

    @settings(max_examples=80, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(line, min_size=1, max_size=80), st.integers(60, 400))
    def prop(lines: list[str], max_chars: int) -> None:
        text = "\n".join(lines)
        out = fn(text, max_chars)
        if len(text) <= max_chars:
            if out != text:
                raise Fail(f"不超长的文本被改了：{text[:30]!r}")
            return
        head, tail, n, out = _split(fn, text, max_chars)
        problems = []
        if len(out) > max_chars:
            problems.append(f"长度 {len(out)} > {max_chars}")
        if not (text.startswith(head) and text.endswith(tail)):
            problems.append("开头不是前缀或结尾不是后缀")
        elif n != len(text) - len(head) - len(tail) or n < 0:
            problems.append(f"省略数 {n} 不对（应为 {len(text) - len(head) - len(tail)}）")
        elif not (_at_line_start(text, len(head)) or text[len(head)] == "\n") or \
                not _at_line_start(text, len(text) - len(tail)):
            problems.append("没有在行边界切分")
        last = lines[-1]
        if len(last) <= max_chars // 3 and len(tail) < len(last):
            problems.append(f"最后一行 {last!r} 没有完整保留")
        if problems:
            raise Fail(f"{'；'.join(problems)}（{len(lines)} 行，max_chars={max_chars}）")

    with with_reporter(lambda _msg: None):
        prop()


EXERCISE = Exercise("02", "02_smart_truncate", "截断：保留开头和结尾，在行边界切分，省略数精确", "truncate_head_tail", (
    Check("short_text_unchanged", "不超过 max_chars 的文本原样返回", "先比较 len(text) 和 max_chars", check_short),
    Check("keeps_tail", "结尾的「总计：9692」被保留（原课程的 bug：只保留开头）",
          "预算分给开头和结尾两段：结论、总计往往在最后", check_tail),
    Check("keeps_head", "开头的标题被保留", "开头一段从 text[0] 开始", check_head),
    Check("within_budget", "结果（含标记）不超过 max_chars", "先算出标记的长度，剩下的预算再分给开头和结尾", check_budget),
    Check("omitted_count_exact", "标记里的省略字符数精确（原课程 strip() 后少算）",
          "省略数 = len(text) - len(head) - len(tail)；head/tail 不要 strip()", check_exact),
    Check("line_boundaries", "开头在一行末尾结束，结尾从一行开头开始",
          "开头用 text.rfind('\\n', 0, 预算) 找切点；结尾用 text.find('\\n', 起点) 后移到下一行", check_lines),
    Check("random_texts", "随机生成的 80 段文本都满足以上规则（hypothesis）",
          "想想只有一行、空行很多、预算很小时会怎样", check_random),
))
