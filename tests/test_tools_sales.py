"""analyze_sales_csv: the course's worked numbers, its failure cases, strict parsing, real line numbers, the path fence."""
from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import SimulatedClock, ToolExecutor, use_clock
from toolkit.tools import DATA_DIR_ENV, analyze_sales_csv, default_registry

ROOT = Path(__file__).resolve().parent.parent
LESSON_CSV = ROOT / "data" / "input" / "sales.csv"
FAULTS = ROOT / "data" / "faults" / "sales"
HEADER = "category,quantity,unit_price\n"


@pytest.fixture
def lesson_data(monkeypatch):
    """The real data/input/ directory (read only)."""
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    return LESSON_CSV


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """An empty data directory the tools read instead of data/input/."""
    directory = tmp_path / "input"
    directory.mkdir()
    monkeypatch.setenv(DATA_DIR_ENV, str(directory))
    return directory


def write_csv(directory: Path, text: str, name: str = "sales.csv") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def error_of(result: dict) -> dict:
    assert result["status"] == "error", result
    assert result["data"] is None
    assert set(result) == {"status", "data", "source", "error"}
    return result["error"]


# --- the worked numbers of chapter 07 ---------------------------------------------------

def test_lesson_csv_gives_the_seed_numbers(lesson_data):
    result = analyze_sales_csv()
    assert result["status"] == "ok" and result["error"] is None
    data = result["data"]
    assert data["row_count"] == 5
    assert data["total_sales"] == 9692
    assert data["category_sales"] == [{"category": "显示器", "sales": 4495},
                                      {"category": "键盘", "sales": 2985},
                                      {"category": "鼠标", "sales": 2212}]
    assert (data["highest_category"], data["highest_sales"]) == ("显示器", 4495)
    assert data["currency_note"]
    assert result["source"] == ["data/input/sales.csv"]


def test_totals_agree_with_an_independent_computation_of_the_lesson_csv(lesson_data):
    totals: dict[str, int] = {}
    with lesson_data.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            totals[row["category"]] = totals.get(row["category"], 0) + int(row["quantity"]) * int(row["unit_price"])
    data = analyze_sales_csv()["data"]
    assert {r["category"]: r["sales"] for r in data["category_sales"]} == totals
    assert data["total_sales"] == sum(totals.values())


def test_no_argument_and_the_seeds_path_read_the_same_file(lesson_data):
    assert analyze_sales_csv() == analyze_sales_csv("sales.csv") == analyze_sales_csv("data/input/sales.csv")


# --- the original course code's failure cases ------------------------------------------------------------

def test_renamed_file_gives_file_not_found(data_dir):
    shutil.copy(LESSON_CSV, data_dir / "sales.csv")
    assert analyze_sales_csv()["status"] == "ok"
    (data_dir / "sales.csv").rename(data_dir / "sales.csv.bak")
    result = analyze_sales_csv()
    assert error_of(result)["code"] == "FILE_NOT_FOUND"
    assert "sales.csv" in result["error"]["message"]
    assert result["source"] == ["data/input/sales.csv"]


def test_quantity_abc_gives_invalid_csv_naming_the_line(data_dir):
    lines = LESSON_CSV.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace(",5,", ",abc,")  # 显示器,5,899 is on line 4
    write_csv(data_dir, "".join(lines))
    error = error_of(analyze_sales_csv())
    assert error["code"] == "INVALID_SALES_CSV"
    assert error["line"] == 4 and "第 4 行" in error["message"]
    assert "quantity" in error["message"] and "abc" in error["message"]


def _fault_cases() -> list[dict]:
    return json.loads((FAULTS / "cases.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", _fault_cases(), ids=lambda c: c["file"])
def test_each_bad_csv_case_is_refused_with_its_line(case, data_dir):
    shutil.copy(FAULTS / case["file"], data_dir / "sales.csv")
    error = error_of(analyze_sales_csv())
    assert error["code"] == case["code"]
    assert error["line"] == case["line"]
    assert f"第 {case['line']} 行" in error["message"] or f"第 {case['line']}-" in error["message"]


def test_the_fault_cases_cover_every_kind_of_bad_content():
    names = {c["file"] for c in _fault_cases()}
    for needed in ("quantity_abc.csv", "missing_column.csv", "empty_category.csv", "negative_quantity.csv",
                   "header_only.csv", "gbk_encoded.csv", "multiline_then_bad.csv"):
        assert needed in names
    assert all((FAULTS / n).is_file() for n in names)


# --- stricter than int() -------------------------------------------------------------

@pytest.mark.parametrize("text", ["1_000", "+5", "１２", "٣", " 5.0", "5e2", "0x10", "", " "])
def test_numbers_int_might_accept_are_refused(text, data_dir):
    write_csv(data_dir, HEADER + f"键盘,{text},199\n")
    error = error_of(analyze_sales_csv())
    assert error["code"] == "INVALID_SALES_CSV" and error["line"] == 2


def test_spaces_around_ascii_digits_are_accepted(data_dir):
    write_csv(data_dir, HEADER + "键盘, 12 ,199\n 鼠标 ,\t20,79\n")
    data = analyze_sales_csv()["data"]
    assert data["total_sales"] == 12 * 199 + 20 * 79
    assert [r["category"] for r in data["category_sales"]] == ["键盘", "鼠标"]


def test_negative_number_message_says_negative(data_dir):
    write_csv(data_dir, HEADER + "键盘,12,199\n鼠标,20,-79\n")
    error = error_of(analyze_sales_csv())
    assert error["line"] == 3 and "负数" in error["message"] and "unit_price" in error["message"]


def test_absurdly_long_number_is_an_error_not_a_crash(data_dir):
    write_csv(data_dir, HEADER + "键盘," + "9" * 5000 + ",1\n")
    assert error_of(analyze_sales_csv())["code"] == "INVALID_SALES_CSV"


# --- real CSV lines ---------------------------------------------------------------------

def test_bom_crlf_blank_lines_and_extra_columns_still_parse(data_dir):
    text = "\ufeffcategory,quantity,unit_price,note\r\n\r\n键盘,12,199,a\r\n\r\n鼠标,20,79,\r\n"
    write_csv(data_dir, text)
    data = analyze_sales_csv()["data"]
    assert data["row_count"] == 2 and data["total_sales"] == 12 * 199 + 20 * 79


def test_quoted_multiline_category_counts_as_one_row(data_dir):
    write_csv(data_dir, HEADER + '"键盘\n有线",12,199\n鼠标,20,79\n')
    data = analyze_sales_csv()["data"]
    assert data["row_count"] == 2
    assert {"category": "键盘\n有线", "sales": 2388} in data["category_sales"]


def test_bad_multiline_row_names_its_span(data_dir):
    write_csv(data_dir, HEADER + '键盘,12,199\n"鼠标\n无线",x,79\n')
    error = error_of(analyze_sales_csv())
    assert error["line"] == 3 and "第 3-4 行" in error["message"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.text(alphabet="键盘鼠标 ,\"\n", min_size=1, max_size=6).filter(str.strip),
                               st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=8),
       bad_at=st.integers(0, 8), blank_lines=st.integers(0, 2),
       bad_category=st.sampled_from(["键盘", "多行\n类别", "a,\"b\"\n\nc"]))
def test_the_named_line_is_where_the_bad_row_starts(rows, bad_at, blank_lines, bad_category, data_dir):
    """Whatever quoting and line breaks come before it, the error names the bad row's first line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["category", "quantity", "unit_price"])
    bad_at = min(bad_at, len(rows))
    for i, row in enumerate(rows):
        if i == bad_at:
            break
        writer.writerow(row)
        out.write("\n" * blank_lines)
    expected_line = out.getvalue().count("\n") + 1
    writer.writerow([bad_category, "abc", "1"])
    write_csv(data_dir, out.getvalue())
    error = error_of(analyze_sales_csv())
    assert error["line"] == expected_line


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["键盘", "鼠标", "显示器", "a,b", "x\"y"]),
                               st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=10))
def test_totals_equal_the_sum_of_quantity_times_price(rows, data_dir):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["category", "quantity", "unit_price"])
    writer.writerows(rows)
    write_csv(data_dir, out.getvalue())
    data = analyze_sales_csv()["data"]
    expected: dict[str, int] = {}
    for category, quantity, price in rows:
        expected[category] = expected.get(category, 0) + quantity * price
    assert data["total_sales"] == sum(expected.values())
    assert {r["category"]: r["sales"] for r in data["category_sales"]} == expected
    assert data["highest_sales"] == max(expected.values())
    sales = [r["sales"] for r in data["category_sales"]]
    assert sales == sorted(sales, reverse=True)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(raw, data_dir):
    (data_dir / "sales.csv").write_bytes(raw)
    result = analyze_sales_csv()
    assert result["status"] in ("ok", "error")
    if result["status"] == "error":
        assert result["error"]["code"] == "INVALID_SALES_CSV"
        assert isinstance(result["error"]["line"], int) and result["error"]["line"] >= 1


def test_non_utf8_file_is_invalid_csv_not_an_exception(data_dir):
    (data_dir / "sales.csv").write_bytes((HEADER + "键盘,12,199\n").encode("gbk"))
    error = error_of(analyze_sales_csv())
    assert error["code"] == "INVALID_SALES_CSV" and error["line"] == 2 and "UTF-8" in error["message"]


# --- the path fence ---------------------------------------------------------------------

@pytest.mark.parametrize("path", ["../sales.csv", "../../etc/passwd", "data/input/../../README.md",
                                  "sub/../../x.csv", "..\\sales.csv", "/etc/passwd", "C:\\Windows\\win.ini",
                                  "\\\\server\\share\\x.csv", "", "   ", "a\x00b.csv", "x" * 300])
def test_paths_outside_the_data_directory_are_refused(path, data_dir):
    write_csv(data_dir, HEADER + "键盘,12,199\n")
    error = error_of(analyze_sales_csv(path))
    assert error["code"] == "PATH_NOT_ALLOWED"
    assert "data/input/" in error["message"] and "拒绝" in error["message"]


def test_absolute_path_is_refused_even_inside_the_data_directory(data_dir):
    target = write_csv(data_dir, HEADER + "键盘,12,199\n")
    assert error_of(analyze_sales_csv(str(target.resolve())))["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.parametrize("bad", [None, 5, ["sales.csv"], b"sales.csv"])
def test_a_path_that_is_not_a_string_is_refused_without_an_exception(bad, data_dir):
    assert error_of(analyze_sales_csv(bad))["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_leading_out_is_refused_and_one_staying_in_is_allowed(data_dir, tmp_path):
    secret = tmp_path / "outside.csv"
    secret.write_text(HEADER + "机密,1,1\n", encoding="utf-8")
    write_csv(data_dir, HEADER + "键盘,1,2\n", name="real.csv")
    try:
        (data_dir / "out.csv").symlink_to(secret)
        (data_dir / "in.csv").symlink_to(data_dir / "real.csv")
        (data_dir / "escape").symlink_to(tmp_path, target_is_directory=True)
    except OSError:
        pytest.skip("cannot create symlinks here")
    assert error_of(analyze_sales_csv("out.csv"))["code"] == "PATH_NOT_ALLOWED"
    assert error_of(analyze_sales_csv("escape/outside.csv"))["code"] == "PATH_NOT_ALLOWED"
    assert analyze_sales_csv("in.csv")["data"]["total_sales"] == 2


def test_a_file_in_a_subdirectory_is_allowed(data_dir):
    (data_dir / "2026").mkdir()
    write_csv(data_dir / "2026", HEADER + "键盘,2,3\n", name="may.csv")
    result = analyze_sales_csv("2026/may.csv")
    assert result["data"]["total_sales"] == 6 and result["source"] == ["data/input/2026/may.csv"]


def test_errors_do_not_show_the_real_directory(data_dir):
    write_csv(data_dir, HEADER + "键盘,x,1\n")
    for result in (analyze_sales_csv(), analyze_sales_csv("missing.csv"), analyze_sales_csv("../x")):
        assert str(data_dir) not in json.dumps(result, ensure_ascii=False)


def test_a_directory_is_not_a_file(data_dir):
    (data_dir / "folder.csv").mkdir()
    assert error_of(analyze_sales_csv("folder.csv"))["code"] == "FILE_NOT_FOUND"


# --- through the executor, as a model would call it --------------------------------------

def _run(call: dict):
    async def go():
        return await ToolExecutor(max_retries=2).run_tool_call(call, default_registry())
    with use_clock(SimulatedClock(seed=0)):
        return asyncio.run(go())


def test_model_call_with_the_seeds_path_succeeds_through_the_executor(lesson_data):
    result = _run({"id": "call_1", "function": {"name": "analyze_sales_csv",
                                                 "arguments": '{"path": "data/input/sales.csv"}'}})
    assert result.ok and result.call_id == "call_1"
    assert result.artifact["total_sales"] == 9692 and result.source == ["data/input/sales.csv"]


def test_escaping_path_from_a_model_becomes_a_fatal_result_not_retried(lesson_data):
    result = _run({"id": "call_2", "function": {"name": "analyze_sales_csv", "arguments": '{"path": "../../.env"}'}})
    assert not result.ok and result.error_code == "PATH_NOT_ALLOWED"
    assert result.error_type == "fatal" and result.attempts == 1


def test_unknown_argument_is_refused_by_the_schema(lesson_data):
    result = _run({"id": "call_3", "function": {"name": "analyze_sales_csv", "arguments": '{"file": "x.csv"}'}})
    assert result.error_code == "INVALID_ARGUMENTS" and result.attempts == 0
