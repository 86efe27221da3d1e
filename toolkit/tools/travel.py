"""Offline weather and flight tools for the two-step task of chapter 04 ("查上海天气，然后查北京飞上海的航班").

Both read small, clearly fictional teaching data (data/input/weather.json and
data/input/flights.json) and answer in the course's envelope
{status, data, source, error}, so the agent loop and the answer check treat
them like the sales tool. They never raise: an unknown city is CITY_NOT_FOUND
with the list of known cities, a missing data file FILE_NOT_FOUND.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Any, Callable

from ..knowledge import ToolKnowledge
from ._files import DataDir, envelope, error_envelope, load_json_data

__all__ = ["get_weather", "search_flights", "weather_cities", "flight_cities", "WEATHER_FILE", "FLIGHTS_FILE",
           "TEACHING_DATE", "TODAY_ENV", "teaching_today", "RELATIVE_DAYS", "WEATHER_KNOWLEDGE", "FLIGHTS_KNOWLEDGE",
           "render_weather", "render_flights"]

# "今天" in this course is a fixed teaching date, not the machine's date: the fictional weather is
# dated 2026-05-16, and every run (notebook outputs, tests) must give the same flights.
TEACHING_DATE = _dt.date(2026, 5, 16)
TODAY_ENV = "TOOLKIT_TODAY"  # YYYY-MM-DD to move the teaching date (an instructor's choice)
RELATIVE_DAYS = {"今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2}

WEATHER_FILE = "weather.json"
FLIGHTS_FILE = "flights.json"
FICTION_NOTE = "教学用虚构数据，不是真实天气或航班"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_WEEKDAYS = "一二三四五六日"


def teaching_today() -> _dt.date:
    """The course's "today": $TOOLKIT_TODAY (YYYY-MM-DD) if set and valid, else TEACHING_DATE (2026-05-16)."""
    override = os.environ.get(TODAY_ENV, "").strip()
    try:
        return _dt.date.fromisoformat(override) if _DATE.fullmatch(override) else TEACHING_DATE
    except ValueError:
        return TEACHING_DATE


def _city_name(city: Any) -> str | None:
    """"上海", " 上海市 " -> "上海"; None for anything that is not a non-empty str."""
    if not isinstance(city, str) or not city.strip():
        return None
    name = city.strip()
    return name[:-1] if len(name) > 2 and name.endswith("市") else name


def _unknown_city(label: str, city: Any, known: list[str], source: list[str]) -> dict:
    shown = city if isinstance(city, str) else repr(city)
    return error_envelope("CITY_NOT_FOUND",
                          f"没有{label}“{str(shown)[:40]}”的数据；可查询的城市：{'、'.join(known)}",
                          source, known_cities=known)


def _table(file: str, key: str, container: type, what: str, folder: DataDir) -> tuple[dict, str] | dict:
    """(the file's JSON, its logical path) when `key` holds a `container` of dicts, else an error envelope."""
    loaded = load_json_data(file, folder)
    if isinstance(loaded, dict):
        return loaded
    value, logical = loaded
    items = value.get(key) if isinstance(value, dict) else None
    rows = items.values() if isinstance(items, dict) else items
    if not isinstance(items, container) or not all(isinstance(row, dict) for row in rows):
        return error_envelope("INVALID_DATA_FILE", f"{logical} 缺少 {key} {what}", [logical])
    return value, logical


def _weather_table(folder: DataDir) -> tuple[dict, str] | dict:
    return _table(WEATHER_FILE, "cities", dict, "对象", folder)


def _flight_table(folder: DataDir) -> tuple[dict, str] | dict:
    return _table(FLIGHTS_FILE, "flights", list, "列表", folder)


def weather_cities(data_dir: DataDir = None) -> list[str]:
    """Cities in weather.json (in `data_dir`, default the tools' folder), in file order; [] when it is
    missing or broken."""
    table = _weather_table(data_dir)
    return [] if isinstance(table, dict) else list(table[0]["cities"])


def flight_cities(data_dir: DataDir = None) -> list[str]:
    """Every origin and destination in flights.json, in first-seen order; [] when unreadable."""
    table = _flight_table(data_dir)
    return [] if isinstance(table, dict) else _endpoints(table[0]["flights"])


def _endpoints(flights: list[dict]) -> list[str]:
    names = [f.get(k) for f in flights for k in ("origin", "destination")]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def get_weather(city: str, *, data_dir: DataDir = None) -> dict:
    """Today's (fictional) weather for `city`, e.g. "上海" (a trailing 市 is ignored).

    data: city, condition, temp_c, temp_low_c, humidity_pct, wind, aqi,
    updated_at, note. An unknown or empty city gives CITY_NOT_FOUND whose
    message and "known_cities" list the cities there is data for. `data_dir`
    reads another folder's weather.json (not part of the tool's schema).
    """
    table = _weather_table(data_dir)
    if isinstance(table, dict):
        return table
    value, logical = table
    cities = value["cities"]
    name = _city_name(city)
    if name not in cities:
        return _unknown_city("城市", city, list(cities), [logical])
    data = {"city": name, **cities[name], "updated_at": value.get("updated_at"), "note": FICTION_NOTE}
    return envelope(data, [logical])


def _parse_date(date: Any) -> _dt.date | None | dict:
    if date is None or (isinstance(date, str) and not date.strip()):
        return None
    if isinstance(date, str) and date.strip() in RELATIVE_DAYS:
        return teaching_today() + _dt.timedelta(days=RELATIVE_DAYS[date.strip()])
    if isinstance(date, str) and _DATE.fullmatch(date.strip()):
        try:
            return _dt.date.fromisoformat(date.strip())
        except ValueError:
            pass
    return error_envelope("INVALID_DATE", f"日期“{str(date)[:40]}”无效，请用 YYYY-MM-DD 格式（例如 2026-05-16）或 今天/明天/后天，或不传日期")


def _schedule(flight: dict) -> str:
    days = flight.get("days")
    if not days:
        return "每天"
    return "仅" + "、".join(f"周{_WEEKDAYS[d - 1]}" for d in days if isinstance(d, int) and 1 <= d <= 7)


def _public(flight: dict) -> dict:
    shown = {k: v for k, v in flight.items() if k != "days"}
    return {**shown, "schedule": _schedule(flight)}


def search_flights(origin: str, destination: str, date: str | None = None, *, data_dir: DataDir = None) -> dict:
    """(Fictional) flights from `origin` to `destination`, earliest first.

    `date` (optional): "YYYY-MM-DD", or 今天 / 明天 / 后天, which count from the
    course's fixed teaching date (`teaching_today()`: 2026-05-16, a Saturday,
    unless $TOOLKIT_TODAY says otherwise), never from the machine's clock. A
    date keeps only the flights that fly on its weekday and the data says
    "date" and "weekday"; without a date the whole timetable is listed, each
    flight with its "schedule", and the data has no "date" field at all.
    No flight on the route is a success with count 0. Errors:
    CITY_NOT_FOUND (unknown city, with known_cities), INVALID_ARGUMENTS
    (origin equals destination), INVALID_DATE (not a real YYYY-MM-DD date).
    `data_dir` reads another folder's flights.json (not part of the tool's schema).
    """
    table = _flight_table(data_dir)
    if isinstance(table, dict):
        return table
    value, logical = table
    known = _endpoints(value["flights"])
    start, end = _city_name(origin), _city_name(destination)
    for label, raw, name in (("出发城市", origin, start), ("到达城市", destination, end)):
        if name not in known:
            return _unknown_city(label, raw, known, [logical])
    if start == end:
        return error_envelope("INVALID_ARGUMENTS", f"出发地和目的地都是{start}，请给出两个不同的城市", [logical])
    day = _parse_date(date)
    if isinstance(day, dict):
        return {**day, "source": [logical]}
    found = [f for f in value["flights"] if f.get("origin") == start and f.get("destination") == end
             and (day is None or not f.get("days") or day.isoweekday() in f["days"])]
    found.sort(key=lambda f: str(f.get("depart", "")))
    data: dict[str, Any] = {"origin": start, "destination": end}
    if day is not None:
        data["date"], data["weekday"] = day.isoformat(), f"周{_WEEKDAYS[day.isoweekday() - 1]}"
    data.update({"count": len(found), "flights": [_public(f) for f in found],
                 "airline": value.get("airline"), "currency": value.get("currency"), "note": FICTION_NOTE})
    if day is None:
        data["note"] += "；没有指定日期，列出整张时刻表（见各航班的班期）"
    if not found:
        data["note"] += f"；没有找到{start}到{end}的航班（教学数据只含少数航线）"
    return envelope(data, [logical])


# --- what the rest of the toolkit learns from these tools (toolkit.knowledge) -----------------

CITY_NAMES = ("北京", "上海", "广州", "深圳", "杭州", "成都", "南京", "武汉", "西安", "重庆", "天津", "苏州",
              "长沙", "郑州", "青岛", "厦门", "昆明", "大连", "哈尔滨", "沈阳", "三亚", "拉萨", "乌鲁木齐", "香港")
_COMMON_LABELS = {"city": "城市", "known_cities": "可查询的城市", "updated_at": "更新时间", "note": "备注"}

_SHOWN_FLIGHTS = 5


def render_weather(tool: str, data: Any, say: Callable[[Any], str]) -> str | None:
    """How the offline model answers from a weather result: one sentence (None when the data is not one)."""
    if not (isinstance(data, dict) and {"city", "condition", "temp_c"} <= data.keys()):
        return None
    low = f"最低 {say(data['temp_low_c'])}℃、" if "temp_low_c" in data else ""
    parts = [f"{say(data['city'])}{say(data['condition'])}，气温{low}最高 {say(data['temp_c'])}℃"]
    if "humidity_pct" in data:
        parts.append(f"湿度 {say(data['humidity_pct'])}%")
    if "wind" in data:
        parts.append(say(data["wind"]))
    if "aqi" in data:
        parts.append(f"空气质量指数 {say(data['aqi'])}")
    when = f"数据更新于 {say(data['updated_at'])}" if data.get("updated_at") else ""
    notes = "；".join(x for x in (when, say(data["note"]) if data.get("note") else "") if x)
    return f"根据工具 {tool}：" + "，".join(parts) + (f"（{notes}）" if notes else "") + "。"


def _flight_words(flight: dict, say: Callable[[Any], str], currency: str) -> str:
    text = f"{say(flight.get('flight_no'))} {say(flight.get('depart'))} 起飞、{say(flight.get('arrive'))} 到达"
    if "price" in flight:
        text += f"，票价 {say(flight['price'])}{currency}"
    if "seats_left" in flight:
        text += f"，余票 {say(flight['seats_left'])}"
    if flight.get("schedule") and flight["schedule"] != "每天":
        text += f"（{say(flight['schedule'])}）"
    return text


def render_flights(tool: str, data: Any, say: Callable[[Any], str]) -> str | None:
    """How the offline model answers from a flights result: the flights in one sentence, the cheapest named."""
    flights = data.get("flights") if isinstance(data, dict) else None
    if not (isinstance(flights, list) and all(isinstance(f, dict) and "flight_no" in f for f in flights)
            and {"origin", "destination"} <= data.keys()):
        return None
    day = f"{say(data['date'])}（{say(data.get('weekday'))}）" if data.get("date") else "时刻表上"
    route = f"{day}{say(data['origin'])}飞{say(data['destination'])}"
    if not flights:
        return f"根据工具 {tool}：{route}没有航班（{say(data.get('note'))}）。"
    currency = f" {say(data['currency'])}" if data.get("currency") else ""
    shown = "；".join(_flight_words(f, say, currency) for f in flights[:_SHOWN_FLIGHTS])
    more = f"，先列前 {_SHOWN_FLIGHTS} 个" if len(flights) > _SHOWN_FLIGHTS else ""
    text = f"根据工具 {tool}：{route}有 {len(flights)} 个航班{more}：{shown}"
    priced = [f for f in flights if isinstance(f.get("price"), (int, float)) and not isinstance(f["price"], bool)]
    if len(priced) > 1:
        cheapest = min(priced, key=lambda f: f["price"])
        text += f"。最便宜的是 {say(cheapest['flight_no'])}，{say(cheapest['price'])}{currency}"
    extras = "；".join(say(data[k]) for k in ("airline", "note") if data.get(k))
    return text + (f"（{extras}）" if extras else "") + "。"


WEATHER_KNOWLEDGE = ToolKnowledge(
    labels={**_COMMON_LABELS, "condition": "天气", "temp_c": "最高气温（℃）", "temp_low_c": "最低气温（℃）",
            "humidity_pct": "湿度（%）", "wind": "风力", "aqi": "空气质量指数"},
    suggestions={"CITY_NOT_FOUND": "从工具给出的可查询城市里选一个，或如实告诉用户没有这个城市的数据"},
    render=render_weather,
    places=CITY_NAMES,
)
FLIGHTS_KNOWLEDGE = ToolKnowledge(
    labels={**_COMMON_LABELS, "origin": "出发地", "destination": "目的地", "date": "日期", "weekday": "星期",
            "flights": "航班", "flight_no": "航班号", "airline": "航空公司", "depart": "起飞", "arrive": "到达",
            "price": "票价", "seats_left": "余票", "schedule": "班期", "currency": "币种", "count": "数量"},
    suggestions={"CITY_NOT_FOUND": "从工具给出的可查询城市里选一个，或如实告诉用户没有这个城市的数据",
                 "INVALID_DATE": "把日期改成 YYYY-MM-DD 或 今天/明天/后天 后再查"},
    render=render_flights,
    places=CITY_NAMES,
)
