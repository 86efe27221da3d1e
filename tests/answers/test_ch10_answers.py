"""The answers chapter 10 gives to its 想一想 questions are true of the chapter's code and of the toolkit.

Each test reads its claims from the answer's own <details> text (a number, a share, an error code) and checks
them against a run, so an answer whose wording and the code drift apart fails here."""
from __future__ import annotations

import json
import re
from pathlib import Path

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.agent import run_agent
from toolkit.clearing import ClearPolicy
from toolkit.tools.orders import Outbox, orders_registry
from toolkit.viz import context_sizes

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "10_long_runs.ipynb"
QUESTION = "把 4 月所有已支付的订单找出来，给每位客户发一条付款确认通知，最后告诉我一共通知了几位客户、订单总金额是多少。"


def versions(chapter: Path | None = None) -> list:
    """Each clear_old_results the chapter writes, in order, with the placeholder it calls at that point: the cells
    that define either run top to bottom in one namespace as the notebook runs them (checks left out); a version
    is taken, with a copy of the namespace of its moment, after each of the chapter's own cells (not a your-turn
    cell, whose placeholder line raises)."""
    import types
    found, namespace = [], {"copy": __import__("copy"), "json": json}  # the chapter imports them at the top
    for cell in json.loads((chapter or CHAPTER).read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not re.search(r"^def (clear_old_results|placeholder)\(", source, re.M):
            continue
        exec(compile(re.sub(r"^check\(.*$", "", source, flags=re.M), "10_long_runs.ipynb", "exec"), namespace)
        if "clear_old_results" in namespace and "your-turn" not in cell["metadata"].get("tags", []):
            fn = namespace["clear_old_results"]
            found.append(types.FunctionType(fn.__code__, dict(namespace), fn.__name__, fn.__defaults__))
    return found


def answer(n: int) -> str:
    """The text inside the <details> of the chapter's 想一想 n."""
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and f"**想一想 {n}：**" in source:
            found = re.search(r"<details><summary>答案</summary>(.*?)</details>", source, re.S)
            assert found, f"想一想 {n} has no <details> answer"
            return found.group(1)
    raise AssertionError(f"the chapter has no 想一想 {n}")


def claim(text: str, pattern: str) -> re.Match:
    """The answer's claim matching `pattern`: the test fails, naming it, when the answer no longer says it."""
    found = re.search(pattern, text)
    assert found, f"the answer no longer says {pattern!r}: {text[:200]!r}"
    return found


_DIGITS = dict(zip("一二三四五六七八九", range(1, 10)))


def chinese_number(text: str) -> int:
    """一 .. 九十九 written in hanzi (二十, 二十三, 十五), as the answers write counts."""
    if "十" not in text:
        return _DIGITS[text]
    tens, _, ones = text.partition("十")
    return (_DIGITS[tens] if tens else 1) * 10 + (_DIGITS[ones] if ones else 0)


def long_run(**settings):
    executor = ToolExecutor(result_max_chars=1200)
    outbox = Outbox()
    settings.setdefault("approve", True)
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(QUESTION, registry=orders_registry(executor, outbox), executor=executor, max_turns=60, **settings)
    return run, outbox


def test_the_chapter_checks_four_versions():
    assert len(versions()) == 4


def test_q1_deleting_old_tool_messages_gets_the_request_refused_and_the_run_ends_in_an_error():
    text = answer(1)
    claim(text, "请求被拒绝，运行以错误结束")
    status = claim(text, r"会以 (\d{3}) 拒绝").group(1)
    first = versions()[0]
    run, _ = long_run(clear=lambda messages: first(messages, 3000))
    assert run.stopped == "error" and status in run.answer and "tool_call" in run.answer


def test_q2_the_third_version_sends_the_same_notices_with_less_context_but_cannot_confirm_cleared_receipts():
    text = answer(2)
    claim(text, "通知完全一样")
    share = _DIGITS[claim(text, r"最后一轮发出去的字符少了(.)成左右").group(1)] / 10
    receipts = chinese_number(claim(text, r"有([一二三四五六七八九十]+)位客户的发送回执被清掉了").group(1))
    full, outbox = long_run()
    final = versions()[-1]
    mine, mine_outbox = long_run(clear=lambda messages: final(messages, 3000, keep_last=3))
    assert mine_outbox.sent == outbox.sent
    saved = 1 - context_sizes(mine)[-1] / context_sizes(full)[-1]
    assert abs(saved - share) <= 0.05, f"the answer says 少了{share:.0%}左右, the run saved {saved:.1%}"
    assert mine.answer != full.answer and claim(text, "无法确认") and "无法确认是否发出" in mine.answer
    unsure = next(line for line in mine.answer.splitlines() if "无法确认是否发出" in line)
    assert f"另有 {receipts} 位的发送回执已从对话中清除" in unsure
    assert mine.answer.splitlines()[0] == full.answer.splitlines()[0]  # "订单、客户、金额都没丢"
    claim(text, "`exempt` 正是为它准备的")
    exempt, _ = long_run(clear=ClearPolicy(budget_chars=3000, keep_last=3, exempt=("send_notice",)))
    assert exempt.answer == full.answer  # the receipts kept: the answer is whole again


def test_q3_clearing_everything_but_the_last_result_loses_nothing_the_model_noted():
    text = answer(3)
    claim(text, "能，回答和通知都与不清除时完全一样")
    claim(text, "【笔记】")
    claim(text, "离线替身模型的脚本")  # the answer says whose behaviour this is (the notes are scripted)
    assert not re.search(r"真实的?模型", text), "no claim about what real models do"
    full, outbox = long_run()
    bare, bare_outbox = long_run(clear=ClearPolicy(budget_chars=0, keep_last=1))
    assert bare.answer == full.answer and bare_outbox.sent == outbox.sent
    assert any("【笔记】" in (m["content"] or "") for m in bare.messages if m["role"] == "assistant")
