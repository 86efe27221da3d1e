"""get_weather / search_flights on the teaching data, and default_registry's schemas."""
from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import jsonschema
import pytest

from toolkit import SimulatedClock, ToolExecutor, ToolRegistry, use_clock
from toolkit.tools import DATA_DIR_ENV, analyze_sales_csv, default_registry, get_weather, search_flights

ROOT = Path(__file__).resolve().parent.parent
WEATHER = json.loads((ROOT / "data" / "input" / "weather.json").read_text(encoding="utf-8"))
FLIGHTS = json.loads((ROOT / "data" / "input" / "flights.json").read_text(encoding="utf-8"))
CITIES = list(WEATHER["cities"])


@pytest.fixture(autouse=True)
def lesson_data(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


@pytest.fixture
def empty_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return tmp_path


def _next(weekday: int) -> dt.date:
    """The first date on or after 2026-05-11 with this ISO weekday."""
    start = dt.date(2026, 5, 11)
    return start + dt.timedelta(days=(weekday - start.isoweekday()) % 7)


# --- the data ---------------------------------------------------------------------------

def test_teaching_data_is_marked_fictional():
    assert "虚构" in WEATHER["_note"] and "虚构" in FLIGHTS["_note"]
    assert "虚构" in get_weather("上海")["data"]["note"]
    assert "虚构" in search_flights("北京", "上海")["data"]["note"]


def test_flights_only_connect_cities_that_have_weather():
    ends = {f[k] for f in FLIGHTS["flights"] for k in ("origin", "destination")}
    assert ends <= set(CITIES)
    assert any(f["origin"] == "北京" and f["destination"] == "上海" for f in FLIGHTS["flights"])


# --- get_weather --------------------------------------------------------------------------

@pytest.mark.parametrize("city", CITIES)
def test_weather_returns_the_file_values_for_every_city(city):
    result = get_weather(city)
    assert result["status"] == "ok" and result["error"] is None
    assert result["source"] == ["data/input/weather.json"]
    for key, value in WEATHER["cities"][city].items():
        assert result["data"][key] == value
    assert result["data"]["city"] == city


def test_trailing_shi_and_spaces_are_ignored():
    assert get_weather(" 上海市 ")["data"] == get_weather("上海")["data"]


@pytest.mark.parametrize("city", ["东京", "Shanghai", "", None, 42])
def test_unknown_city_lists_the_known_ones(city):
    result = get_weather(city)
    assert result["status"] == "error" and result["data"] is None
    error = result["error"]
    assert error["code"] == "CITY_NOT_FOUND"
    assert error["known_cities"] == CITIES
    assert all(name in error["message"] for name in CITIES)


# --- search_flights -----------------------------------------------------------------------

def test_beijing_to_shanghai_lists_the_whole_timetable_in_departure_order():
    result = search_flights("北京", "上海")
    expected = [f["flight_no"] for f in FLIGHTS["flights"] if (f["origin"], f["destination"]) == ("北京", "上海")]
    data = result["data"]
    assert result["status"] == "ok" and "date" not in data and "weekday" not in data
    assert sorted(f["flight_no"] for f in data["flights"]) == sorted(expected)
    assert data["count"] == len(expected) >= 2
    departs = [f["depart"] for f in data["flights"]]
    assert departs == sorted(departs)
    assert all(f["schedule"] for f in data["flights"])


@pytest.mark.parametrize("weekday", range(1, 8))
def test_a_date_keeps_only_flights_flying_that_weekday(weekday):
    day = _next(weekday)
    result = search_flights("北京", "上海", day.isoformat())
    expected = {f["flight_no"] for f in FLIGHTS["flights"] if (f["origin"], f["destination"]) == ("北京", "上海")
                and weekday in f.get("days", range(1, 8))}
    assert {f["flight_no"] for f in result["data"]["flights"]} == expected
    assert result["data"]["date"] == day.isoformat()
    assert result["data"]["weekday"].startswith("周")


def test_weekday_only_flight_is_missing_on_a_monday_and_present_on_a_saturday():
    monday = {f["flight_no"] for f in search_flights("北京", "上海", _next(1).isoformat())["data"]["flights"]}
    saturday = {f["flight_no"] for f in search_flights("北京", "上海", _next(6).isoformat())["data"]["flights"]}
    assert saturday - monday  # the teaching data has a weekend-only flight


def test_route_without_flights_is_an_empty_success():
    result = search_flights("广州", "深圳")
    assert result["status"] == "ok" and result["data"]["count"] == 0 and result["data"]["flights"] == []
    assert "没有找到" in result["data"]["note"]


@pytest.mark.parametrize("date", ["2026-02-30", "2026/05/16", "16-05-2026", "２０２６-05-16", "大后天", 20260516])
def test_invalid_date_is_an_error_envelope(date):
    result = search_flights("北京", "上海", date)
    assert result["status"] == "error" and result["error"]["code"] == "INVALID_DATE"
    assert "YYYY-MM-DD" in result["error"]["message"]


def test_unknown_destination_is_city_not_found():
    error = search_flights("北京", "火星")["error"]
    assert error["code"] == "CITY_NOT_FOUND" and "火星" in error["message"] and "北京" in error["known_cities"]


def test_same_origin_and_destination_is_refused():
    assert search_flights("上海", "上海市")["error"]["code"] == "INVALID_ARGUMENTS"


# --- missing or broken data files -------------------------------------------------------------

def test_missing_data_files_are_reported_not_raised(empty_dir):
    assert get_weather("上海")["error"]["code"] == "FILE_NOT_FOUND"
    assert search_flights("北京", "上海")["error"]["code"] == "FILE_NOT_FOUND"


@pytest.mark.parametrize("text", ["{not json", "[]", '{"cities": [1, 2]}', '{"flights": {"a": 1}}'])
def test_broken_data_files_are_invalid_data_file(text, empty_dir):
    (empty_dir / "weather.json").write_text(text, encoding="utf-8")
    (empty_dir / "flights.json").write_text(text, encoding="utf-8")
    assert get_weather("上海")["error"]["code"] == "INVALID_DATA_FILE"
    assert search_flights("北京", "上海")["error"]["code"] == "INVALID_DATA_FILE"


# --- the registry ------------------------------------------------------------------------------

def test_default_registry_is_new_on_every_call_and_has_the_three_tools():
    first, second = default_registry(), default_registry()
    assert isinstance(first, ToolRegistry) and first is not second
    assert first.names == ["analyze_sales_csv", "get_weather", "search_flights"]
    first.get("analyze_sales_csv").parameters["properties"]["path"]["maxLength"] = 1
    assert default_registry().get("analyze_sales_csv").parameters["properties"]["path"]["maxLength"] == 255


def test_kinds_and_descriptions():
    registry = default_registry()
    assert {t.name: t.kind for t in registry} == {"analyze_sales_csv": "read", "get_weather": "query",
                                                 "search_flights": "query"}
    assert not any(t.writes for t in registry)
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in t.description) for t in registry)


@pytest.mark.parametrize("tool", default_registry(), ids=lambda t: t.name)
def test_every_schema_is_valid_json_schema_and_closed(tool):
    jsonschema.Draft202012Validator.check_schema(tool.parameters)
    jsonschema.Draft7Validator.check_schema(tool.parameters)
    assert tool.parameters["type"] == "object" and tool.parameters["additionalProperties"] is False
    json.dumps(tool.openai_schema(), ensure_ascii=False)


def test_city_enums_come_from_the_data_files():
    registry = default_registry()
    weather_enum = registry.get("get_weather").parameters["properties"]["city"]["enum"]
    assert weather_enum == CITIES
    flight_enum = registry.get("search_flights").parameters["properties"]["origin"]["enum"]
    assert set(flight_enum) == {f[k] for f in FLIGHTS["flights"] for k in ("origin", "destination")}
    assert all(get_weather(city)["status"] == "ok" for city in weather_enum)


@pytest.mark.parametrize("name, args, valid", [
    ("analyze_sales_csv", {}, True),
    ("analyze_sales_csv", {"path": "sales.csv"}, True),
    ("analyze_sales_csv", {"path": ""}, False),
    ("analyze_sales_csv", {"path": 3}, False),
    ("analyze_sales_csv", {"path": "sales.csv", "sql": "drop"}, False),
    ("get_weather", {"city": "上海"}, True),
    ("get_weather", {"city": "东京"}, False),
    ("get_weather", {}, False),
    ("search_flights", {"origin": "北京", "destination": "上海"}, True),
    ("search_flights", {"origin": "北京", "destination": "上海", "date": "2026-05-16"}, True),
    ("search_flights", {"origin": "北京", "destination": "上海", "date": "２０２６-05-16"}, False),
    ("search_flights", {"origin": "北京", "destination": "上海", "date": "tomorrow"}, False),
    ("search_flights", {"origin": "北京"}, False),
])
def test_schemas_accept_good_arguments_and_reject_bad_ones(name, args, valid):
    registry = default_registry()
    checked, problem = registry.check_arguments(registry.get(name), args)
    assert (problem is None) is valid
    if valid:
        assert checked == args


def test_registry_without_data_files_drops_the_enums_but_stays_valid(empty_dir):
    registry = default_registry()
    city = registry.get("get_weather").parameters["properties"]["city"]
    assert "enum" not in city and city["type"] == "string"
    jsonschema.Draft202012Validator.check_schema(registry.get("search_flights").parameters)


def test_a_registry_reads_the_data_folder_it_is_given_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    import os
    import shutil

    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    (tmp_path / "weather.json").write_text(json.dumps({"cities": {"拉萨": {"condition": "晴", "temp_c": 20}}},
                                                      ensure_ascii=False), encoding="utf-8")
    shutil.copy(ROOT / "data" / "faults" / "sales" / "quantity_abc.csv", tmp_path / "sales.csv")
    registry = default_registry(data_dir=tmp_path)
    assert registry.get("get_weather").parameters["properties"]["city"]["enum"] == ["拉萨"]
    assert "enum" not in registry.get("search_flights").parameters["properties"]["origin"]  # no flights.json there
    calls = [{"id": "w", "function": {"name": "get_weather", "arguments": '{"city": "拉萨"}'}},
             {"id": "s", "function": {"name": "analyze_sales_csv", "arguments": "{}"}}]
    with use_clock(SimulatedClock(seed=0)):
        weather, sales = asyncio.run(ToolExecutor(registry=registry).run_tool_calls(calls))
    assert weather.ok and weather.data["condition"] == "晴"
    assert sales.error_code == "INVALID_SALES_CSV"
    assert DATA_DIR_ENV not in os.environ
    assert default_registry().get("get_weather").parameters["properties"]["city"]["enum"] == CITIES  # others unchanged
    assert get_weather("拉萨")["error"]["code"] == "CITY_NOT_FOUND"


def test_seed_004_two_step_task_runs_through_the_executor():
    """查上海天气，然后查北京飞上海的航班: two calls, one batch, both answered with their ids."""
    calls = [{"id": "w", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}},
             {"id": "f", "function": {"name": "search_flights",
                                      "arguments": '{"origin": "北京", "destination": "上海"}'}}]

    async def go():
        return await ToolExecutor().run_tool_calls(calls, default_registry())
    with use_clock(SimulatedClock(seed=0)):
        weather, flights = asyncio.run(go())
    assert (weather.call_id, flights.call_id) == ("w", "f")
    assert weather.ok and weather.data["temp_c"] == WEATHER["cities"]["上海"]["temp_c"]
    assert flights.ok and flights.data["count"] >= 2 and flights.source == ["data/input/flights.json"]
    assert analyze_sales_csv()["status"] == "ok"  # the fixture restored the real data directory
