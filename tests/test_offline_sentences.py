"""The offline model answers a weather or flights question in a sentence built from the tool's data (not a
dump of field labels), every figure copied from the data, so the answer check passes it."""
from __future__ import annotations

from toolkit import SimulatedClock, use_clock
from toolkit.agent import run_agent
from toolkit.tools import get_weather, search_flights
from toolkit.tools.travel import render_flights, render_weather
from toolkit.verify import check_answer

TRIP = "帮我查一下上海的天气，然后顺便查一下今天北京飞上海的航班"


def test_the_two_step_answer_is_two_sentences_that_pass_the_answer_check():
    with use_clock(SimulatedClock(seed=0)):
        run = run_agent(TRIP)
    weather, flights = run.answer.removeprefix("【离线模型】").splitlines()
    assert weather.startswith("根据工具 get_weather：上海多云，气温最低 21℃、最高 28℃")
    assert flights.startswith("根据工具 search_flights：2026-05-16（周六）北京飞上海有 3 个航班：LAB101 07:30 起飞")
    assert "最便宜的是 LAB105，760 CNY" in flights
    assert "返回：" not in run.answer and "城市：" not in run.answer
    assert check_answer(run.answer, *run.tool_results, question=TRIP).ok


def say(value):
    return str(value)


def test_no_flight_on_the_route_is_said_and_other_shapes_fall_back_to_the_labels():
    data = {"origin": "北京", "destination": "上海", "date": "2026-05-18", "weekday": "周一", "count": 0,
            "flights": [], "note": "没有找到"}
    assert render_flights("search_flights", data, say) == "根据工具 search_flights：2026-05-18（周一）北京飞上海没有航班（没有找到）。"
    assert render_flights("search_flights", {"flights": "省略了 3 项"}, say) is None
    assert render_weather("get_weather", {"city": "上海"}, say) is None
    assert render_weather("get_weather", get_weather("上海")["data"], say).startswith("根据工具 get_weather：上海多云")


def test_more_flights_than_shown_says_how_many_are_shown():
    data = search_flights("北京", "上海")["data"]
    many = {**data, "flights": data["flights"] * 3}
    text = render_flights("search_flights", many, say)
    assert "有 9 个航班，先列前 5 个" in text and text.count("起飞") == 5
