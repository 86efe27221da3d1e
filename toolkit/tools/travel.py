"""Offline weather and flight tools for seed 004's two-step task ("查上海天气，然后查北京飞上海的航班").

Both read small, clearly fictional teaching data (data/input/weather.json and
data/input/flights.json) and answer in seed 003's envelope
{status, data, source, error}, so the agent loop and the answer check treat
them like the sales tool. They never raise: an unknown city is CITY_NOT_FOUND
with the list of known cities, a missing data file FILE_NOT_FOUND.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from ._files import envelope, error_envelope, load_json_data

__all__ = ["get_weather", "search_flights", "weather_cities", "flight_cities", "WEATHER_FILE", "FLIGHTS_FILE"]

WEATHER_FILE = "weather.json"
FLIGHTS_FILE = "flights.json"
FICTION_NOTE = "教学用虚构数据，不是真实天气或航班"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_WEEKDAYS = "一二三四五六日"


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


def _table(file: str, key: str, container: type, what: str) -> tuple[dict, str] | dict:
    """(the file's JSON, its logical path) when `key` holds a `container` of dicts, else an error envelope."""
    loaded = load_json_data(file)
    if isinstance(loaded, dict):
        return loaded
    value, logical = loaded
    items = value.get(key) if isinstance(value, dict) else None
    rows = items.values() if isinstance(items, dict) else items
    if not isinstance(items, container) or not all(isinstance(row, dict) for row in rows):
        return error_envelope("INVALID_DATA_FILE", f"{logical} 缺少 {key} {what}", [logical])
    return value, logical


def _weather_table() -> tuple[dict, str] | dict:
    return _table(WEATHER_FILE, "cities", dict, "对象")


def _flight_table() -> tuple[dict, str] | dict:
    return _table(FLIGHTS_FILE, "flights", list, "列表")


def weather_cities() -> list[str]:
    """Cities in weather.json, in file order; [] when the file is missing or broken."""
    table = _weather_table()
    return [] if isinstance(table, dict) else list(table[0]["cities"])


def flight_cities() -> list[str]:
    """Every origin and destination in flights.json, in first-seen order; [] when unreadable."""
    table = _flight_table()
    return [] if isinstance(table, dict) else _endpoints(table[0]["flights"])


def _endpoints(flights: list[dict]) -> list[str]:
    names = [f.get(k) for f in flights for k in ("origin", "destination")]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def get_weather(city: str) -> dict:
    """Today's (fictional) weather for `city`, e.g. "上海" (a trailing 市 is ignored).

    data: city, condition, temp_c, temp_low_c, humidity_pct, wind, aqi,
    updated_at, note. An unknown or empty city gives CITY_NOT_FOUND whose
    message and "known_cities" list the cities there is data for.
    """
    table = _weather_table()
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
    if isinstance(date, str) and _DATE.fullmatch(date.strip()):
        try:
            return _dt.date.fromisoformat(date.strip())
        except ValueError:
            pass
    return error_envelope("INVALID_DATE", f"日期“{str(date)[:40]}”无效，请用 YYYY-MM-DD 格式（例如 2026-05-16），或不传日期")


def _schedule(flight: dict) -> str:
    days = flight.get("days")
    if not days:
        return "每天"
    return "仅" + "、".join(f"周{_WEEKDAYS[d - 1]}" for d in days if isinstance(d, int) and 1 <= d <= 7)


def _public(flight: dict) -> dict:
    shown = {k: v for k, v in flight.items() if k != "days"}
    return {**shown, "schedule": _schedule(flight)}


def search_flights(origin: str, destination: str, date: str | None = None) -> dict:
    """(Fictional) flights from `origin` to `destination`, earliest first.

    `date` ("YYYY-MM-DD", optional) keeps only flights that fly on that
    weekday; without it the whole timetable is listed, each flight with its
    "schedule". No flight on the route is a success with count 0. Errors:
    CITY_NOT_FOUND (unknown city, with known_cities), INVALID_ARGUMENTS
    (origin equals destination), INVALID_DATE (not a real YYYY-MM-DD date).
    """
    table = _flight_table()
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
    data = {"origin": start, "destination": end, "date": day.isoformat() if day else None,
            "count": len(found), "flights": [_public(f) for f in found],
            "airline": value.get("airline"), "currency": value.get("currency"), "note": FICTION_NOTE}
    if day is not None:
        data["weekday"] = f"周{_WEEKDAYS[day.isoweekday() - 1]}"
    if not found:
        data["note"] += f"；没有找到{start}到{end}的航班（教学数据只含少数航线）"
    return envelope(data, [logical])
