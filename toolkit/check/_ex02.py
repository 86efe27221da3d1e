"""Exercise 02: truncate_head_tail(text, max_chars) — head + tail at line boundaries, exact omitted count."""
from __future__ import annotations

import re
from typing import Any

from ._core import Check, Exercise, Fail, expect
from ._props import property_check

MARKER = re.compile(r"\n…（已省略 (-?\d+) 字符）…\n")  # a negative count is read, to be named

REPORT = "\n".join(
    ["季度销售报告", "说明：本报告由 analyze_sales_csv 生成。", ""]
    + [f"第 {i:03d} 笔：类别 {'键盘鼠标显示器'[i % 3 * 2:i % 3 * 2 + 2]}，数量 {i % 7 + 1}" for i in range(1, 301)]
    + ["", "结论：销售额最高的类别是显示器（4495）。", "总计：9692"])


LONG_LAST = "\n".join(["销售日志", "第 1 笔：显示器 1 台", "第 2 笔：键盘 2 个", "备注："] + ["显示器" * 120])


def _split(play: Any, text: str, max_chars: int) -> tuple[str, str, int, str]:
    out = expect(play(text, max_chars), str)
    found = list(MARKER.finditer(out))
    if len(found) != 1:
        raise Fail(f"超长文本的结果里应恰好有一个标记「\\n…（已省略 N 字符）…\\n」，找到 {len(found)} 个："
                   f"{out[:60]!r}…{out[-60:]!r}")
    m = found[0]
    return out[:m.start()], out[m.end():], int(m.group(1)), out


def check_short(play: Any) -> None:
    for text in ("", "一行", "第一行\n第二行\n", "x" * 100):
        out = play(text, 100)
        if out != text:
            raise Fail(f"长度不超过 max_chars 的文本应原样返回：输入 {text[:20]!r}，得到 {str(out)[:40]!r}")


def check_tail(play: Any) -> None:
    head, tail, _, _ = _split(play, REPORT, 600)
    if "总计：9692" not in tail:
        raise Fail(f"结尾的「总计：9692」丢了：只保留开头会丢掉结论。结尾部分是 {tail[-60:]!r}")


def check_head(play: Any) -> None:
    head, tail, _, _ = _split(play, REPORT, 600)
    if not head.startswith("季度销售报告"):
        raise Fail(f"开头的标题丢了：开头部分是 {head[:40]!r}")


def check_budget(play: Any) -> None:
    for max_chars in (120, 300, 600, 2000):
        out = expect(play(REPORT, max_chars), str)
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时结果有 {len(out)} 个字符（标记也算在内）")


def check_exact(play: Any) -> None:
    for max_chars in (120, 600, 2000):
        head, tail, n, _ = _split(play, REPORT, max_chars)
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


def check_lines(play: Any) -> None:
    for max_chars in (120, 600, 2000):
        head, tail, _, _ = _split(play, REPORT, max_chars)
        if not (head == "" or REPORT[len(head)] == "\n" or head.endswith("\n")):
            raise Fail(f"开头部分停在了一行的中间：…{head[-20:]!r}")
        if not _at_line_start(REPORT, len(REPORT) - len(tail)):
            raise Fail(f"结尾部分从一行的中间开始：{tail[:20]!r}…")


def check_long_last_line(play: Any) -> None:
    for max_chars in (120, 300):
        out = expect(play(LONG_LAST, max_chars), str)
        found = list(MARKER.finditer(out))
        if len(found) != 1:
            raise Fail(f"超长文本的结果里应恰好有一个标记，找到 {len(found)} 个：{out[:60]!r}…")
        head, tail, n = out[:found[0].start()], out[found[0].end():], int(found[0].group(1))
        real = len(LONG_LAST) - len(head) - len(tail)
        if len(out) > max_chars or n != real or n < 0:
            raise Fail(f"最后一行（{len(LONG_LAST.splitlines()[-1])} 字符）比结尾的预算还长，max_chars={max_chars}："
                       f"结果 {len(out)} 字符，标记说省略 {n}，实际省略 {real}。text.find('\\n', 起点) 找不到换行符时返回 -1，"
                       "结尾不能从 -1 + 1 = 0 开始（那样结尾是整段原文，省略数成了负数）")
        if not LONG_LAST.endswith(tail) or not _at_line_start(LONG_LAST, len(LONG_LAST) - len(tail)):
            raise Fail(f"结尾必须是原文的后缀、从一行的开头开始（这里可以是空的），得到 {tail[:30]!r}…")


def _long_text(args: tuple[list[str], int, float]) -> tuple[str, int]:
    """The lines repeated until the text is about `factor` times the budget (one line stays one line)."""
    parts, max_chars, factor = args
    text, again = "\n".join(parts), ("\n" if len(parts) > 1 else "") + "\n".join(parts)
    while 0 < len(text) < factor * max_chars:
        text += again
    return text, max_chars


def check_random(play: Any) -> None:
    from hypothesis import strategies as st

    short = st.one_of(st.just(""), st.text(alphabet=st.sampled_from(list("销售额显示器abc019 ，。")), min_size=1,
                                           max_size=12))
    long = st.text(alphabet=st.sampled_from(list("销售额显示器abc019")), min_size=40, max_size=300)
    parts = st.one_of(st.lists(short, min_size=1, max_size=40),                            # many short lines
                      st.tuples(st.lists(short, max_size=20), long).map(lambda p: p[0] + [p[1]]),  # a long last line
                      long.map(lambda line: [line]),                                       # one long line
                      st.lists(st.one_of(short, long), min_size=2, max_size=20))           # mixed
    cases = st.tuples(parts, st.integers(60, 300), st.sampled_from([0.5, 1.5, 2, 3, 5, 10])).map(_long_text)

    def classify(case: tuple[str, int]) -> set[str]:
        text, max_chars = case
        if len(text) <= max_chars:
            return {"不超长"}
        last = text.rsplit("\n", 1)[-1]
        return {"超长，要截断"} | ({"最后一行比一半预算还长"} if len(last) > max_chars // 2 else set()) \
            | ({"只有一行"} if "\n" not in text else set())

    def test(case: tuple[str, int]) -> None:
        text, max_chars = case
        out = expect(play(text, max_chars), str)
        if len(text) <= max_chars:
            if out != text:
                raise Fail(f"不超长的文本被改了：{text[:30]!r}")
            return
        head, tail, n, out = _split(play, text, max_chars)
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
        lines = text.split("\n")
        if len(lines) > 1 and len(lines[-1]) <= max_chars // 3 and len(tail) < len(lines[-1]):
            problems.append(f"最后一行 {lines[-1]!r} 没有完整保留")
        if problems:
            raise Fail(f"{'；'.join(problems)}（{len(lines)} 行、{len(text)} 字符，max_chars={max_chars}，"
                       f"最后一行 {len(lines[-1])} 字符）")

    property_check(cases, test, examples=80, classify=classify,
                   cover={"超长，要截断": 45, "最后一行比一半预算还长": 12, "只有一行": 8, "不超长": 8})


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
    Check("long_last_line", "最后一行比结尾的预算还长时，结果仍然不超预算、省略数精确",
          "text.find('\\n', 起点) 找不到时返回 -1：这时结尾为空，从 len(text) 开始", check_long_last_line),
    Check("random_texts", "随机生成的 80 段文本都满足以上规则（hypothesis，一半以上需要截断）",
          "想想只有一行、空行很多、预算很小时会怎样", check_random),
))
