"""The capstone's fault cases (timeouts, a bad CSV row, a result over its budget, a model that invents figures, and a
plain run), each a question and what its runs get, and the answer check both agents are judged by."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["CASES", "Case", "REPORT", "SALES_QUESTION", "toolkit_check"]

SALES_QUESTION = "哪个类别的销售额最高？总销售额是多少？"


@dataclass(frozen=True)
class Case:
    """One fault case: a question, what goes wrong (Chinese), and what each run gets (registry, budget, model)."""

    key: str
    title: str
    question: str
    what: str
    setup: Callable[[], contextlib.AbstractContextManager[dict]]


@contextlib.contextmanager
def _plain() -> Iterator[dict]:
    yield {}


def _times_out(fn: Callable[..., Any], times: int) -> Callable[..., Any]:
    """`fn` whose first `times` calls raise TimeoutError: a plain function, so a student's plain retry works."""
    calls = 0

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls <= times:
            raise TimeoutError(f"第 {calls} 次调用超时")
        return fn(*args, **kwargs)
    return tool


@contextlib.contextmanager
def _timeouts() -> Iterator[dict]:
    from ..tools import default_registry

    registry = default_registry()
    tool = registry.get("analyze_sales_csv")
    assert tool is not None
    registry.add(dataclasses.replace(tool, fn=_times_out(tool.fn, 2)))
    yield {"registry": registry}


@contextlib.contextmanager
def _bad_row() -> Iterator[dict]:
    from ..tools import course_dir, default_registry

    with tempfile.TemporaryDirectory(prefix="capstone-") as folder_:
        shutil.copy(course_dir() / "data" / "faults" / "sales" / "quantity_abc.csv", Path(folder_) / "sales.csv")
        yield {"registry": default_registry(data_dir=folder_)}


REPORT = "\n".join(["季度销售报告", "说明：逐笔记录如下。"]
                   + [f"第 {i:03d} 笔：{('键盘', '鼠标', '显示器')[i % 3]} {i % 7 + 1} 件" for i in range(1, 121)]
                   + ["结论：销售额最高的类别是显示器（4495）。", "总计：9692"])


@contextlib.contextmanager
def _long_report() -> Iterator[dict]:
    from ..registry import ToolRegistry

    registry = ToolRegistry()
    registry.register(lambda: REPORT, name="read_report", description="读取本季度销售报告的全文", kind="read",
                      parameters={"type": "object", "properties": {}, "additionalProperties": False})
    yield {"registry": registry, "result_max_chars": 400}


@contextlib.contextmanager
def _inventing_model() -> Iterator[dict]:
    from ..llm import Settings, make_client

    client, model = make_client(Settings(base_url=None, model="offline-stand-in:ignore-results", offline=True))
    yield {"client": client, "model": model}


CASES: tuple[Case, ...] = (
    Case("plain", "一切正常", SALES_QUESTION, "工具正常返回：两边应该一样", _plain),
    Case("timeouts", "工具连续超时两次", SALES_QUESTION, "analyze_sales_csv 前两次超时，第三次才成功", _timeouts),
    Case("bad_row", "CSV 第 4 行坏了", SALES_QUESTION, "sales.csv 第 4 行的数量是 abc", _bad_row),
    Case("long", "报告太长", "读一下销售报告，总计是多少？", f"报告全文 {len(REPORT)} 字符，预算 400；总计在最后一行",
         _long_report),
    Case("invented", "模型编造数字", SALES_QUESTION, "模型无视工具结果、自己编数字（离线模型的犯错变体）",
         _inventing_model),
)


_TOTAL_WORDS = ("总计", "合计", "总额", "总销售额", "一共", "总共")


def toolkit_check(question: str, answer: str, results: list) -> Any:
    """check_answer with the question: every number from the tools, and a question that asks for a total
    (总计是多少) needs a total in the answer when the tools succeeded (a dump cut before the total fails)."""
    from ..claims import total_claims
    from ..verify import check_answer

    if not results:
        return None
    verdict = check_answer(answer, *results, question=question)
    if any(word in question for word in _TOTAL_WORDS) and all(r.ok for r in results) and not total_claims(answer):
        return dataclasses.replace(verdict, ok=False, mismatches=[*verdict.mismatches, "问题问的是总计，回答里没有给出总计"])
    return verdict


