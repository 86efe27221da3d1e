"""Argument extraction: the values a question gives for a tool's parameters (enums, dates, places)."""
from __future__ import annotations

import re
from typing import Any

from ...knowledge import all_knowledge, knowledge_for

__all__ = ["extract_arguments", "NOTHING", "RELATIVE_DAYS"]

_PLACE_NAMES = {"city", "origin", "destination", "from", "to", "location", "place", "from_city", "to_city"}
_PLACE_HINTS = ("城市", "出发地", "到达地", "目的地", "地点")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
RELATIVE_DAYS = ("今天", "明天", "后天", "今日")
NOTHING = object()
# what any model knows without being told: the big cities, for a place argument of a tool that names none
COMMON_PLACES = ("北京", "上海", "广州", "深圳", "杭州", "成都", "南京", "武汉", "西安", "重庆", "天津", "苏州",
                 "长沙", "郑州", "青岛", "厦门", "昆明", "大连", "哈尔滨", "沈阳", "三亚", "拉萨", "乌鲁木齐", "香港")


def _is_date(name: str, prop: dict) -> bool:
    return "date" in name.lower() or prop.get("format") == "date" or "日期" in str(prop.get("description") or "")


def _is_place(name: str, prop: dict) -> bool:
    description = str(prop.get("description") or "")
    return name.lower() in _PLACE_NAMES or any(h in description for h in _PLACE_HINTS)


def _places(tool: str) -> list[str]:
    """The tool's own place names (its ToolKnowledge), else every taught tool's, else the common ones."""
    own = list(knowledge_for(tool).places)
    return own or list(dict.fromkeys(p for k in all_knowledge().values() for p in k.places)) or list(COMMON_PLACES)


def _first_unused(text: str, candidates: Any, used: set) -> Any:
    found = sorted((text.find(c), i, c) for i, c in enumerate(candidates) if isinstance(c, str) and c and c in text)
    return next((c for _, _, c in found if c not in used), NOTHING)


def _candidate(tool: str, text: str, name: str, prop: dict, used: set) -> Any:
    if isinstance(prop.get("enum"), list):
        return _first_unused(text, prop["enum"], used)
    if prop.get("type") not in (None, "string"):
        return NOTHING
    if _is_date(name, prop):
        match = _DATE.search(text)
        if match:
            y, m, d = match.group().split("-")
            return f"{y}-{int(m):02d}-{int(d):02d}"
        return next((w for w in RELATIVE_DAYS if w in text), NOTHING)
    if _is_place(name, prop):
        return _first_unused(text, _places(tool), used)
    return NOTHING


def _find_value(tool: str, text: str, name: str, prop: dict, used: set) -> Any:
    value = _candidate(tool, text, name, prop, used)
    pattern = prop.get("pattern")
    if isinstance(value, str) and isinstance(pattern, str):
        try:
            return value if re.search(pattern, value) else NOTHING
        except re.error:
            return value
    return value


def extract_arguments(tool: str, texts: list[str], schema: dict) -> tuple[dict, tuple[str, ...]]:
    """(arguments, missing required names) from the first text that has each value (the step, then the question)."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    args: dict = {}
    missing: list[str] = []
    used: set = set()
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        value = next((v for v in (_find_value(tool, t, name, prop, used) for t in texts) if v is not NOTHING),
                     NOTHING)
        if value is not NOTHING:
            args[name] = value
            used.add(value)
        elif "default" in prop:
            args[name] = prop["default"]
        elif name in required:
            missing.append(name)
    return args, tuple(missing)
