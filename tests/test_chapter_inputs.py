"""The chapter inputs in data/input/ are what data/make_chapter_inputs.py makes, and fit their lessons."""
from __future__ import annotations

import importlib.util
import json
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INPUT = ROOT / "data" / "input"


def _generator():
    spec = importlib.util.spec_from_file_location("make_chapter_inputs", ROOT / "data" / "make_chapter_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_inputs_match_the_generator_byte_for_byte():
    for name, text in _generator().files().items():
        assert (INPUT / name).read_bytes() == text.encode("utf-8"), name


def test_the_long_page_has_its_answer_only_in_the_last_tenth():
    text = (INPUT / "web_page_long.txt").read_text(encoding="utf-8")
    assert len(text) > 8000  # longer than smart_truncate's default threshold
    assert text.find("5999") > len(text) * 0.9
    assert text.count("5999") == 1


def test_the_query_result_has_200_whole_records_with_consistent_amounts():
    rows = json.loads((INPUT / "query_orders_200.json").read_text(encoding="utf-8"))
    assert len(rows) == 200
    assert len({r["order_id"] for r in rows}) == 200
    assert all(r["amount"] == r["quantity"] * r["unit_price"] for r in rows)


def test_the_weather_api_answer_agrees_with_the_weather_tool_data():
    api = json.loads((INPUT / "weather_api_shanghai.json").read_text(encoding="utf-8"))
    tool = json.loads((INPUT / "weather.json").read_text(encoding="utf-8"))["cities"]["上海"]
    assert (api["now"]["temp"], api["now"]["text"], api["now"]["humidity"]) == \
        (tool["temp_c"], tool["condition"], tool["humidity_pct"])
    assert api["air"]["aqi"] == tool["aqi"]
    assert api["daily"][0]["temp_min"] == tool["temp_low_c"]


def test_the_html_table_lists_every_flight_of_flights_json():
    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            self.inside = self.inside or tag == "td"

        def handle_endtag(self, tag):
            self.inside = self.inside and tag != "td"

        def handle_data(self, data):
            if self.inside and data.strip():
                self.cells.append(data.strip())

    parser = Cells()
    parser.feed((INPUT / "flight_prices.html").read_text(encoding="utf-8"))
    flights = json.loads((INPUT / "flights.json").read_text(encoding="utf-8"))["flights"]
    for f in flights:
        assert f["flight_no"] in parser.cells and str(f["price"]) in parser.cells
