"""Planning: which offered tool fits each piece of a question, in order (rarity-weighted shared bigrams)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...task_context import split_steps
from .arguments import extract_arguments
from .request import OfferedTool

__all__ = ["Step", "plan", "step_for", "best_tool", "features"]

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_SYNONYMS = {"机票": "航班", "飞机": "航班", "气温": "天气", "温度": "天气", "下雨": "天气",
             "销量": "销售", "营业额": "销售额", "卖得": "销售", "收入": "销售额"}
_GENERIC = {"查询", "一下", "可以", "什么", "多少", "这个", "那个", "需要", "调用", "工具", "返回",
            "使用", "请问", "帮我", "我们", "一个", "是否", "如何", "怎么", "进行", "获取", "信息",
            "今天", "明天", "后天", "现在", "当前", "最新", "实时",
            "get", "set", "the", "and", "for", "of", "to", "in", "is", "search", "with"}
_FILLER = re.compile(r"[的了吗呢吧啊]")


@dataclass(frozen=True)
class Step:
    text: str
    tool: str
    args: dict
    missing: tuple[str, ...] = ()


def features(text: str) -> set[str]:
    """The words of `text` a tool or a line is matched on: Chinese bigrams (synonyms added), Latin words."""
    return _features(text)


def _features(text: str) -> set[str]:
    text = text.lower()
    text += " " + " ".join(v for k, v in _SYNONYMS.items() if k in text)
    runs = _CJK_RUN.findall(text)
    feats = {r[i:i + 2] for r in runs for i in range(len(r) - 1) if not _FILLER.search(r[i:i + 2])}
    feats.update(re.findall(r"[a-z]{2,}", text))
    return feats - _GENERIC


def _tool_features(tool: OfferedTool) -> set[str]:
    props = tool.parameters.get("properties") or {}
    parts = [tool.name.replace("_", " "), tool.description]
    for name, prop in props.items() if isinstance(props, dict) else ():
        parts.append(str(name).replace("_", " "))
        if isinstance(prop, dict):
            parts.append(str(prop.get("description") or ""))
    return _features(" ".join(parts))


def best_tool(text: str, tools: list[OfferedTool]) -> OfferedTool | None:
    """The tool whose name/description shares the most (rarity-weighted) bigrams with text."""
    per_tool = [_tool_features(t) for t in tools]
    wanted = _features(text)
    best, best_score = None, 0.0
    for tool, feats in zip(tools, per_tool):
        score = sum(1.0 / sum(f in other for other in per_tool) for f in wanted & feats)
        if score > best_score:
            best, best_score = tool, score
    return best if best_score >= 1.0 else None


def step_for(text: str, tool: OfferedTool, question: str) -> Step:
    args, missing = extract_arguments(tool.name, [text, question], tool.parameters)
    return Step(text, tool.name, args, missing)


def plan(text: str, tools: list[OfferedTool], question: str | None = None) -> list[Step]:
    """One step per piece of the text that a tool fits, in order, without repeats."""
    steps: list[Step] = []
    for piece in split_steps(text, fine=True):
        tool = best_tool(piece, tools)
        if tool is None:
            continue
        step = step_for(piece, tool, question or text)
        if all((s.tool, s.args) != (step.tool, step.args) for s in steps):
            steps.append(step)
    return steps
