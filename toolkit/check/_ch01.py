"""Chapter 01's own checks: parse_tool_result(result, max_chars) as the chapter builds it, step by step.

Step 1 reads errors by their value and writes JSON, step 2 keeps every output within the budget (JSON
still JSON, a long text's head and tail kept), step 3 turns exceptions into a line that says whether
retrying helps (an envelope is fatal unless it says "retryable": true). What is judged is what the model
reads: the text returned, or the JSON of a value returned (the version the chapter saves, parse_as_data,
hands the executor data, which it serializes once).
"""
from __future__ import annotations

import json
from typing import Any

from ._core import Check, Exercise, Fail, expect
from ._props import property_check

PAGE = ("LabBook 14 发布会实录\n" + "\n".join(f"第 {i} 段：现场演示和嘉宾发言。" * 3 for i in range(1, 80))
        + "\n价格：LabBook 14 标准版售价 5999 元。")
ORDERS = [{"order_id": f"SO-{i:04d}", "city": "上海", "amount": 100 + i} for i in range(200)]


def _call(play: Any, raw: Any, max_chars: int = 2000) -> str:
    """What the model reads: the text the parser returned, or the JSON of the value it returned (the executor's
    parse plug-in may return data, which it then serializes once: the chapter's parse_as_data)."""
    value = play(raw, max_chars)
    if isinstance(value, (dict, list, int, float)):  # data (bool too): the model reads its JSON
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):  # not JSON (an object inside): named below as what came back
            pass
    return expect(value, str)


FAILED = "✘ 工具执行失败"
# The original course's code wrote its failures with the emoji U+274C, which a fresh Linux shows as a box; the
# chapter writes ✘ (DejaVu Sans has it). A student who kept the original's mark is not failed for it; the mark is
# built with chr() because it is only matched, never shown (tests/test_glyphs.py reads the literals students see).
FAILED_MARKS = ("✘", chr(0x274C))


def _failure(out: str) -> bool:
    return out.lstrip().startswith(FAILED_MARKS)


def _says_failed(out: str) -> bool:
    return any(out.startswith(f"{mark} 工具执行失败") for mark in FAILED_MARKS)


def check_error_none(play: Any) -> None:
    raw = {"status": "ok", "data": {"total_sales": 9692, "highest_category": "显示器"}, "error": None}
    out = _call(play, raw)
    if _failure(out) or "失败" in out:
        raise Fail(f"{{'error': None}} 被当成了失败：{out[:80]!r}")
    if "9692" not in out:
        raise Fail(f"成功结果里的数据丢了（找不到 9692）：{out[:80]!r}")


def check_error_reported(play: Any) -> None:
    cases = [({"status": "error", "data": None, "error": {"code": "FILE_NOT_FOUND", "message": "找不到 sales.csv"}},
              "找不到 sales.csv"),
             ({"error": "权限不足"}, "权限不足")]
    for raw, message in cases:
        out = _call(play, raw)
        if not _says_failed(out):
            raise Fail(f"{raw!r} 是工具报告的错误，结果应以「{FAILED}」开头，得到 {out[:80]!r}")
        if message not in out:
            raise Fail(f"错误说明里没有工具给的原因「{message}」：{out[:80]!r}")


def check_json(play: Any) -> None:
    for raw in ({"城市": "上海", "降水量": 0, "有预警": False, "预警": None}, ["晴", "多云"], 0, False):
        out = _call(play, raw)
        try:
            back = json.loads(out)
        except ValueError:
            raise Fail(f"{raw!r} 应变成 JSON 文本，得到 {out[:80]!r}（不是合法 JSON，例如 Python 的 repr）") from None
        if back != raw or type(back) is not type(raw):
            raise Fail(f"{raw!r} 转成 JSON 后内容变了：{out[:80]!r}")
        if "上海" in str(raw) and "上海" not in out:
            raise Fail("中文被转义成了 \\uXXXX：json.dumps 要加 ensure_ascii=False")


def check_plain_text(play: Any) -> None:
    text = "上海：多云，28°C，湿度 65%"
    out = _call(play, text)
    if out != text:
        raise Fail(f"不超预算的普通文本应原样返回，得到 {out[:80]!r}")


def _budget_input(kind: int, size: int) -> Any:
    if kind == 0:
        return "第一行\n" + "数据" * size
    if kind == 1:
        return {f"字段{i}": "值" * 5 for i in range(size // 10)}
    return [{"id": i, "name": f"商品{i}"} for i in range(size // 10)]


def check_budget(play: Any) -> None:
    from hypothesis import strategies as st

    cases = st.tuples(st.integers(0, 2), st.sampled_from([50, 300, 2000, 20000]), st.sampled_from([80, 200, 1000]))

    def classify(case: tuple[int, int, int]) -> set[str]:
        kind, size, max_chars = case
        raw = _budget_input(kind, size)
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return {("超出预算" if len(text) > max_chars else "不超预算"), ["文本", "dict", "list"][kind]}

    def test(case: tuple[int, int, int]) -> None:
        kind, size, max_chars = case
        raw = _budget_input(kind, size)
        out = _call(play, raw, max_chars)
        if len(out) > max_chars:
            raise Fail(f"max_chars={max_chars} 时输出有 {len(out)} 个字符（输入类型 {type(raw).__name__}）")

    property_check(cases, test, examples=30, classify=classify,
                   cover={"超出预算": 15, "文本": 4, "dict": 4, "list": 4})


def check_json_kept(play: Any) -> None:
    weather = {f"字段{i}": f"值{i}" * 20 for i in range(40)}
    for raw, total in ((ORDERS, 200), (weather, 40)):
        out = _call(play, raw, 500)
        try:
            json.loads(out)
        except ValueError:
            raise Fail(f"{type(raw).__name__} 超出预算后不再是合法 JSON：{out[:60]!r}…{out[-40:]!r}") from None
        if str(total) not in out:
            raise Fail(f"缩小后要告诉模型一共有多少（{total}），输出里找不到这个数：{out[-80:]!r}")


def check_head_tail(play: Any) -> None:
    out = _call(play, PAGE, 600)
    if not out.startswith("LabBook 14 发布会实录"):
        raise Fail(f"长文本的开头（标题）丢了：{out[:40]!r}")
    if "售价 5999 元" not in out:
        raise Fail(f"长文本结尾的答案（售价 5999 元）丢了：只留开头会丢掉结论。结尾是 {out[-40:]!r}")
    if "省略" not in out:
        raise Fail("中间省略了内容，要注明「省略」了多少，模型才知道这里还有内容")


def check_exceptions(play: Any) -> None:
    for exc, message in ((TimeoutError("查询超时"), "查询超时"), (PermissionError("无权读取该文件"), "无权读取该文件"),
                         (ValueError("city 不能为空"), "city 不能为空")):
        out = _call(play, exc)
        if not _says_failed(out):
            raise Fail(f"异常 {type(exc).__name__}({message!r}) 应变成以「{FAILED}」开头的一句话，得到 {out[:80]!r}")
        if message not in out:
            raise Fail(f"异常的说明「{message}」丢了：{out[:80]!r}")


def _retry_word(out: str) -> str | None:
    return "不可重试" if "不可重试" in out else "可重试" if "可重试" in out else None


def check_retryable(play: Any) -> None:
    cases = [(TimeoutError("查询超时"), "可重试", "超时会自己好"),
             (ConnectionError("连接被重置"), "可重试", "网络抖动会自己好"),
             (PermissionError("无权读取该文件"), "不可重试", "权限不会自己变"),
             ({"status": "error", "error": {"code": "TIMEOUT", "message": "上游超时"}}, "不可重试",
              "信封是工具自己下的结论，没说 retryable 就不可重试"),
             ({"status": "error", "error": {"code": "TIMEOUT", "message": "上游超时"}, "retryable": True}, "可重试",
              "信封写了 \"retryable\": true")]
    for raw, want, why in cases:
        out = _call(play, raw)
        if _retry_word(out) != want:
            raise Fail(f"{raw!r} 应标明「{want}」（{why}），得到 {out[:80]!r}")


EXERCISE = Exercise("ch01", "01_parse_tool_result", "课堂版 parse_tool_result", "parse_tool_result", (
    Check("error_none_is_success", "{'error': None} 是成功，不是失败（原课程用了 'error' in result）",
          "看 error 的值，不是看有没有这个键", check_error_none),
    Check("error_envelope_reported", "工具报告的错误变成一句「✘ 工具执行失败…: 原因」",
          "error 是 dict 时取它的 message；是字符串时直接用", check_error_reported),
    Check("json_not_repr", "dict / list / 0 / False 变成合法 JSON，中文可读",
          "json.dumps(result, ensure_ascii=False)，不要用 str()", check_json),
    Check("plain_text_unchanged", "不超预算的普通文本原样返回", "字符串放得下就直接返回", check_plain_text),
    Check("within_budget", "任何输入的输出都不超过 max_chars（30 个随机输入）",
          "文本超了留头尾，JSON 超了少留几项；省略标记也算在预算里", check_budget),
    Check("json_stays_json", "超预算的 list / dict 缩小后仍是合法 JSON，并说出一共多少项",
          "不要在 JSON 文本上直接切：按项保留，再 json.dumps", check_json_kept),
    Check("keeps_head_and_tail", "超预算的长文本留下开头和结尾（答案常在结尾），中间注明省略",
          "开头一半、结尾一半，中间放「…（已省略 N 字符）…」", check_head_tail),
    Check("exception_reported", "异常对象变成「✘ 工具执行失败…」加异常的说明", "isinstance(result, BaseException)",
          check_exceptions),
    Check("retryable_said", "标明可重试 / 不可重试：超时、断网可重试；信封只有写了 retryable 才可重试",
          "异常按类型判断；信封看 result.get(\"retryable\") is True", check_retryable),
))
