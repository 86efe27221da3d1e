"""Chapter 02's own checks: the student's smart_truncate(text, max_chars, keep_head, keep_tail), step by step.

The chapter writes six versions and runs some of these checks after each (`check(smart_truncate,
"ch02", only=[...])`): head only loses the conclusion (keeps_tail), fixed positions cut lines in two
(line_boundaries), moved cuts with the old count miscount (exact_count), oversized keeps overlap
(impossible_sizes), and two arguments from the executor must fit max_chars (fits_max_chars).
"""
from __future__ import annotations

import re
from typing import Any

from ._core import Check, Exercise, Fail, Raised, expect
from ._plain import describe

MARKER = re.compile(r"\n…（已省略 (-?\d+) 字符）…\n")  # a negative count is read, to be named

REPORT = "\n".join(
    ["季度销售报告", "说明：明细按日期排列，结论和总计在最后。", ""]
    + [f"第 {i:03d} 笔：类别 {('键盘', '鼠标', '显示器')[i % 3]}，数量 {i % 7 + 1}" for i in range(1, 301)]
    + ["", "结论：销售额最高的类别是显示器（4495）。", "总计：9692"])
SIZES = ((600, 300, 200), (1000, 500, 400), (3000, 2000, 800))  # (max_chars, keep_head, keep_tail)


def _split(play: Any, text: str, *args: Any) -> tuple[str, str, int, str]:
    out = expect(play(text, *args), str)
    found = list(MARKER.finditer(out))
    if len(found) != 1:
        raise Fail(f"超长文本的结果里应恰好有一个标记「\\n…（已省略 N 字符）…\\n」，找到 {len(found)} 个："
                   f"{out[:40]!r}…{out[-40:]!r}")
    return out[:found[0].start()], out[found[0].end():], int(found[0].group(1)), out


def _at_line_start(text: str, i: int) -> bool:
    return i == 0 or i == len(text) or text[i - 1] == "\n"


def check_short(play: Any) -> None:
    for text in ("", "一行", "第一行\n第二行\n", REPORT[:500]):
        out = play(text, 500, 300, 150)
        if out != text:
            raise Fail(f"不超过 max_chars 的文本应原样返回：输入 {len(text)} 字符，得到 {describe(out)}")


def check_head(play: Any) -> None:
    head, _, _, _ = _split(play, REPORT, *SIZES[0])
    if not head.startswith("季度销售报告"):
        raise Fail(f"开头的标题丢了：开头部分是 {head[:30]!r}")


def check_tail(play: Any) -> None:
    for size in SIZES:
        head, tail, _, _ = _split(play, REPORT, *size)
        if "总计：9692" not in tail:
            raise Fail(f"max_chars={size[0]}：结尾的「总计：9692」丢了，结论在最后一行，只留开头就看不到它。"
                       f"结果的最后是 {(head + tail)[-30:]!r}")


def check_lines(play: Any) -> None:
    for size in SIZES:
        head, tail, _, _ = _split(play, REPORT, *size)
        if not REPORT.startswith(head) or not REPORT.endswith(tail):
            raise Fail("开头必须是原文的前缀、结尾必须是原文的后缀（不要 strip()，不要改字）")
        if not (head == "" or head.endswith("\n") or REPORT[len(head)] == "\n"):
            raise Fail(f"max_chars={size[0]}：开头停在了一行的中间：…{head[-15:]!r}")
        if not _at_line_start(REPORT, len(REPORT) - len(tail)):
            raise Fail(f"max_chars={size[0]}：结尾从一行的中间开始：{tail[:15]!r}…")


def check_exact(play: Any) -> None:
    for size in SIZES:
        head, tail, n, _ = _split(play, REPORT, *size)
        if not REPORT.startswith(head) or not REPORT.endswith(tail):
            raise Fail("开头必须是原文的前缀、结尾必须是原文的后缀（不要 strip()，不要改字）")
        real = len(REPORT) - len(head) - len(tail)
        if n != real:
            raise Fail(f"max_chars={size[0]}：标记说省略了 {n} 字符，实际省略了 {real} 字符"
                       f"（{len(REPORT)} - 开头 {len(head)} - 结尾 {len(tail)}）")


def check_impossible(play: Any) -> None:
    text = "".join(f"第 {i:03d} 行：订单明细\n" for i in range(1, 801))[:8500]
    try:
        out = play(text, 8000, 4000, 5000)
    except Raised as exc:
        if exc.is_a("NotImplementedError") or not exc.is_a("ValueError"):
            raise
        if not any(name in exc.message for name in ("keep_head", "keep_tail", "max_chars")):
            raise Fail(f"错误信息要告诉调用的人怎么改（提到 keep_head、keep_tail 或 max_chars），得到 {exc.message!r}"
                       ) from None
        return
    raise Fail(f"keep_head + keep_tail（4000 + 5000）超过 max_chars（8000）时应抛出 ValueError，"
               f"不要默默返回：你返回了 {len(str(out))} 字符（比原文的 8500 还长？开头和结尾重叠了）")


def check_fits(play: Any) -> None:
    for max_chars in (160, 600, 2000):
        head, tail, n, out = _split(play, REPORT, max_chars)
        if len(out) > max_chars:
            raise Fail(f"smart_truncate(text, {max_chars}) 返回了 {len(out)} 字符：执行器只传两个参数，"
                       f"结果（标记也算）不能超过 max_chars")
        if "总计：9692" not in tail or n != len(REPORT) - len(head) - len(tail):
            raise Fail(f"smart_truncate(text, {max_chars})：只给两个参数时也要保留结尾的总计、省略数准确")


EXERCISE = Exercise("ch02", "02_smart_truncate", "课堂版 smart_truncate", "smart_truncate", (
    Check("short_text_unchanged", "不超过 max_chars 的文本原样返回", "先比较 len(text) 和 max_chars", check_short),
    Check("keeps_head", "开头的标题被保留", "开头一段从 text[0] 开始", check_head),
    Check("keeps_tail", "结尾的「总计：9692」被保留", "只留开头会丢掉结论：留一段结尾 text[-keep_tail:]", check_tail),
    Check("line_boundaries", "开头在一行末尾结束，结尾从一行开头开始",
          "开头用 text.rfind('\\n', 0, keep_head + 1)，结尾用 text.find('\\n', 起点) + 1", check_lines),
    Check("exact_count", "标记里的省略数准确（头 + 省略 + 尾 = 原文）",
          "切口挪动以后，省略数 = 结尾的起点 - 开头的终点", check_exact),
    Check("impossible_sizes", "keep_head + keep_tail > max_chars 时抛出说明怎么改的 ValueError",
          "函数一开始就检查参数：raise ValueError(\"……把 keep_head 或 keep_tail 调小……\")", check_impossible),
    Check("fits_max_chars", "只给 (text, max_chars) 两个参数时，结果（含标记）不超过 max_chars",
          "keep_head、keep_tail 没给时，先给标记留出位置，剩下的预算再分给开头和结尾", check_fits),
))
