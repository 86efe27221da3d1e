"""The course's example tools and the registry that offers them to a model.

analyze_sales_csv (chapter 07), get_weather and search_flights (the two-step
task of chapter 04) all read offline teaching data from data/input/ (or
$TOOLKIT_DATA_DIR) and return {status, data, source, error}; the executor opens
that envelope once. Each tool's knowledge (answer rules, error suggestions, how
the offline model words its result) sits beside it and is taught here (KNOWLEDGE).
`default_registry()` gives a fresh ToolRegistry with Chinese descriptions and
explicit JSON schemas; the city enums come from the data files, and teaches
each tool's knowledge with `ToolKnowledge.register`, as any tool does.
"""
from __future__ import annotations

import copy
import functools
import os
from typing import Any, Callable

from ..knowledge import teach
from ..registry import ToolRegistry
from ._files import DATA_DIR_ENV, DataDir, course_dir, data_dir
from .sales import SALES_KNOWLEDGE, analyze_sales_csv
from .travel import (FLIGHTS_KNOWLEDGE, WEATHER_KNOWLEDGE, flight_cities, get_weather, search_flights,
                     teaching_today, weather_cities)

__all__ = ["analyze_sales_csv", "get_weather", "search_flights", "default_registry", "course_dir", "data_dir",
           "DATA_DIR_ENV", "SALES_TOOL_SCHEMA", "weather_schema", "flights_schema", "KNOWLEDGE", "teaching_today"]

SALES_TOOL_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 255, "default": "sales.csv",
                 "description": "data/input/ 目录里的 CSV 文件名，默认 sales.csv；不能用绝对路径或 .."},
    },
    "required": [],
    "additionalProperties": False,
}

SALES_DESCRIPTION = ("读取 data/input/ 里的教学销售 CSV（列：category、quantity、unit_price），"
                     "由程序计算总销售额、各类别销售额排名和销售额最高的类别。"
                     "需要准确的销售统计时必须调用，不要自己估算。")
WEATHER_DESCRIPTION = "查询某个城市今天的天气（教学用虚构数据）：天气状况、最高/最低气温、湿度、风力、空气质量。"
FLIGHTS_DESCRIPTION = ("查询两个城市之间的航班（教学用虚构数据），按起飞时间排序，含航班号、起降时间、票价和余票。"
                       "可选日期：YYYY-MM-DD 或 今天/明天/后天（按课程固定的教学日期 2026-05-16 计算），"
                       "只保留当天执飞的航班。")


def _city(description: str, names: list[str]) -> dict:
    schema: dict = {"type": "string", "description": description}
    if names:  # without readable data files, any string is allowed and the tool says what it knows
        schema["enum"] = names
    return schema


def weather_schema(folder: DataDir = None) -> dict:
    """get_weather's parameters; the city enum lists the cities in weather.json (in `data_dir(folder)`)."""
    return {"type": "object",
            "properties": {"city": _city("城市中文名，例如 上海", weather_cities(folder))},
            "required": ["city"], "additionalProperties": False}


def flights_schema(folder: DataDir = None) -> dict:
    """search_flights' parameters; origin/destination enums list the cities in flights.json."""
    cities = flight_cities(folder)
    return {"type": "object",
            "properties": {
                "origin": _city("出发城市中文名，例如 北京", cities),
                "destination": _city("到达城市中文名，例如 上海", cities),
                "date": {"type": "string", "pattern": "^([0-9]{4}-[0-9]{2}-[0-9]{2}|今天|今日|明天|明日|后天)$",
                         "description": "出发日期 YYYY-MM-DD，或 今天/明天/后天（按教学日期计算）；"
                                        "可省略（省略则列出整张时刻表）"},
            },
            "required": ["origin", "destination"], "additionalProperties": False}


# each course tool's knowledge (answer rules, error suggestions, offline wording) lives beside it; the
# functions come with it: code that imports them (check_answer on analyze_sales_csv()'s plain return value,
# no registry in sight) finds their knowledge too. No core module imports this package to get it.
KNOWLEDGE = {"analyze_sales_csv": SALES_KNOWLEDGE, "get_weather": WEATHER_KNOWLEDGE,
             "search_flights": FLIGHTS_KNOWLEDGE}
for _name, _knowledge in KNOWLEDGE.items():
    teach(_name, _knowledge)


def default_registry(data_dir: DataDir = None) -> ToolRegistry:
    """A new ToolRegistry with the three example tools (a new one on every call).

    analyze_sales_csv is a "read" tool (it reads a file), the travel tools are
    "query" tools; none of them writes. Each tool's knowledge is taught as it is
    registered (ToolKnowledge.register). Schemas are read from the data files
    now, so a registry made after the data changes sees the new cities.
    data_dir: the folder every tool of this registry reads (default: `data_dir()`,
    i.e. $TOOLKIT_DATA_DIR or data/input/); the environment is left alone. ValueError (in Chinese) for a
    data_dir that is not a path.
    """
    if data_dir is not None and not isinstance(data_dir, (str, os.PathLike)):
        raise ValueError(f"data_dir 应是一个文件夹路径（字符串或 Path），收到 {type(data_dir).__name__}："
                         "请写成 default_registry(data_dir=\"data/input\")，或不传")

    def bound(fn: Callable[..., Any]) -> Callable[..., Any]:
        return fn if data_dir is None else functools.partial(fn, data_dir=data_dir)

    registry = ToolRegistry()
    SALES_KNOWLEDGE.register(registry, bound(analyze_sales_csv), name="analyze_sales_csv",
                             description=SALES_DESCRIPTION, parameters=copy.deepcopy(SALES_TOOL_SCHEMA), kind="read")
    WEATHER_KNOWLEDGE.register(registry, bound(get_weather), name="get_weather", description=WEATHER_DESCRIPTION,
                               parameters=weather_schema(data_dir), kind="query")
    FLIGHTS_KNOWLEDGE.register(registry, bound(search_flights), name="search_flights",
                               description=FLIGHTS_DESCRIPTION, parameters=flights_schema(data_dir), kind="query")
    return registry
