"""The capstone: the agent on the student's own pieces beside the toolkit's, differences put on the piece that
made them, and nothing a piece does (missing, unloadable, raising) crashes the comparison."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from toolkit import evaluate_tool_result, format_tool_message, parse_tool_result
from toolkit.capstone import CASES, compare, run_case
from toolkit.mine import SLOTS, Piece, load
from toolkit.verify import check_answer

SAMPLE = Path(__file__).resolve().parent / "sample_my_toolkit"
CASE = {c.key: c for c in CASES}


@pytest.fixture
def sample(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "my_toolkit"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def sample_comparison(tmp_path_factory) -> "object":
    folder = tmp_path_factory.mktemp("sample") / "my_toolkit"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLKIT_MY_DIR", str(folder))
        return compare()


def test_with_nothing_saved_every_case_runs_on_the_toolkits_pieces_and_says_which_are_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(tmp_path / "empty"))
    result = compare()
    assert result.saved == [] and not result.single
    assert all(result.mine[c.key] == result.toolkit[c.key] for c in CASES)
    table = result.pieces_table()
    assert table.count("还没有保存") == len(SLOTS)
    assert "还没有保存任何部件" in result.by_piece()


def test_the_toolkits_own_functions_saved_as_the_students_make_no_difference():
    """Attribution can be trusted only if a piece that behaves like the toolkit's is found to: no difference."""
    def check(answer, results):  # the toolkit's answer check, as a student might wrap it
        return check_answer(answer, *results) if results else None

    same = {"evaluate": Piece("evaluate", evaluate_tool_result, None), "check": Piece("check", check, None),
            "format_message": Piece("format_message", None, "还没有保存")}
    result = compare(same)
    assert result.saved == ["evaluate", "check"]
    for slot in result.saved:
        assert result.differences(slot) == {}, slot
    assert "在这 5 个用例里和 toolkit 的表现一样" in result.by_piece()


def test_each_sample_mistake_is_put_on_the_piece_that_made_it(sample_comparison):
    result = sample_comparison
    assert set(result.saved) == set(SLOTS)
    assert set(result.differences("retry")) == {"timeouts"}
    assert "error（TIMEOUT）" in result.differences("retry")["timeouts"][0]
    assert set(result.differences("truncate")) == {"long"}
    assert set(result.differences("parse")) == {"long"}
    assert set(result.differences("check")) == {"bad_row", "long"}
    assert all("插件出错" in diff[0] for diff in result.differences("check").values())
    assert set(result.differences("format_message")) == {c.key for c in CASES}
    assert set(result.differences("evaluate")) == {"bad_row", "long"}


def test_each_difference_says_why(sample_comparison):
    """The reason is in what the student reads (by_piece), not only in a README: which fields the message
    lacks, which decision it carries, how the result ends."""
    result = sample_comparison
    for diff in result.differences("format_message").values():
        assert "少了 error_type、execution_time_ms" in diff[0]
    for slot in ("truncate", "parse"):
        why = result.differences(slot)["long"]
        assert "结果的结尾是" in why[0] and "总计：9692" in why[0]  # the toolkit's end has the total, the piece's not
        assert "验收：不通过（toolkit：通过）" in why
    assert "决定是 retry（toolkit：report_error）" in result.differences("evaluate")["bad_row"][0]
    assert "回答不同" in result.differences("evaluate")["bad_row"]
    text = result.by_piece()
    assert "少了 error_type" in text and "决定是 retry" in text and "模型读到的 tool 消息不同；" not in text.split("retry：")[0]


def test_the_long_case_check_is_given_the_question_so_a_dump_without_the_total_fails():
    toolkit = run_case(CASE["long"])
    assert "9692" in toolkit.answer and toolkit.verdict == "通过"
    head_only = run_case(CASE["long"], {"truncate": lambda text, max_chars: text[:max_chars]})
    assert "9692" not in head_only.answer and head_only.verdict == "不通过"


def test_the_toolkits_run_of_each_case_shows_the_fault_it_is_about(sample_comparison):
    toolkit = sample_comparison.toolkit
    assert toolkit["plain"].statuses == ("success",) and toolkit["plain"].verdict == "通过"
    assert toolkit["timeouts"].statuses == ("success",)  # retried twice on the simulated clock
    assert toolkit["bad_row"].statuses == ("error（INVALID_SALES_CSV）",) and "第 4 行" in toolkit["bad_row"].messages[0]
    assert "总计：9692" in toolkit["long"].messages[0]
    assert toolkit["invented"].verdict == "不通过"


def test_show_puts_the_two_runs_side_by_side_and_refuses_unknown_names(sample_comparison):
    shown = sample_comparison.show("long", "truncate")
    toolkit_part, mine_part = shown.split("— 只换上你的 truncate —")
    assert "总计：9692" in toolkit_part and "总计：9692" not in mine_part and "已截断" in mine_part
    with pytest.raises(ValueError, match="没有叫 'nope' 的用例"):
        sample_comparison.show("nope")
    with pytest.raises(ValueError, match="不是你已保存的部件"):
        sample_comparison.show("long", "clear")


def test_an_unloadable_file_is_one_missing_piece_and_the_rest_still_run(sample):
    (sample / "retry.py").write_text("def call_tool_with_retry(:\n", encoding="utf-8")
    pieces = load()
    assert not pieces["retry"].ok and "加载失败" in pieces["retry"].problem
    result = compare(pieces)
    assert "retry" not in result.saved and "truncate" in result.saved
    assert "加载失败" in result.pieces_table()


@pytest.mark.parametrize("slot, broken", [
    ("parse", lambda raw, max_chars: 1 / 0),
    ("truncate", lambda text, max_chars: None),
    ("retry", lambda tool_fn, *a, max_retries=3, **k: "not a pair"),
    ("format_message", lambda name, call_id, result: 42),
    ("evaluate", lambda result, question: (_ for _ in ()).throw(RuntimeError("坏了"))),
    ("check", lambda answer, results: [][0]),
])
def test_a_broken_piece_is_a_plugin_error_for_that_piece_never_a_crash(slot, broken):
    case = CASE["long"] if slot in ("parse", "truncate") else CASE["plain"]
    outcome = run_case(case, {slot: broken})
    assert outcome.plugin_errors, outcome
    assert slot in outcome.plugin_errors[0]
    if slot != "check":  # the check runs after the answer: the model's run is untouched by it
        assert any("PLUGIN_ERROR" in s for s in outcome.statuses)


@pytest.mark.parametrize("slot, exits", [
    ("parse", lambda raw, max_chars: sys.exit(1)),
    ("truncate", lambda text, max_chars: sys.exit()),
    ("retry", lambda tool_fn, *a, max_retries=3, **k: sys.exit("再见")),
    ("format_message", lambda name, call_id, result: sys.exit(0)),
    ("evaluate", lambda result, question: sys.exit(2)),
    ("check", lambda answer, results: sys.exit(3)),
])
def test_a_piece_calling_sys_exit_is_a_plugin_error_for_that_piece(slot, exits):
    case = CASE["long"] if slot in ("parse", "truncate") else CASE["plain"]
    outcome = run_case(case, {slot: exits})
    assert outcome.plugin_errors and slot in outcome.plugin_errors[0] and "sys.exit" in outcome.plugin_errors[0]


def test_an_async_piece_calling_sys_exit_is_a_plugin_error_too():
    async def retry(tool_fn, *args, max_retries=3, **kwargs):
        sys.exit(1)

    outcome = run_case(CASE["plain"], {"retry": retry})
    assert outcome.plugin_errors and "sys.exit" in outcome.plugin_errors[0]


def test_a_file_calling_sys_exit_on_import_is_a_broken_piece(sample):
    (sample / "parse.py").write_text("import sys\nsys.exit(1)\n", encoding="utf-8")
    pieces = load()
    assert not pieces["parse"].ok and "sys.exit" in pieces["parse"].problem
    assert "parse" not in compare(pieces).saved


def test_nothing_saved_says_which_chapters_save(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(tmp_path / "empty"))
    assert "第 01–05 章和练习 07" in compare().by_piece()


def test_an_exercise_stub_is_not_saved_and_neither_is_anything_under_the_checker(tmp_path, monkeypatch, capsys):
    from toolkit.mine import save

    cell = tmp_path / "cell.py"  # a notebook cell as save reads it: its definitions only
    cell.write_text('def stub(answer, tool_results):\n    """练习里的样子。"""\n    raise NotImplementedError\n\n\n'
                    'def written(answer, tool_results):\n    return {"ok": bool(answer), "problems": []}\n',
                    encoding="utf-8")
    namespace: dict = {}
    exec(compile(cell.read_text(encoding="utf-8"), str(cell), "exec"), namespace)
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(tmp_path / "mine"))
    saved = tmp_path / "mine" / "check.py"
    assert save("check", namespace["stub"]) is None and not saved.exists()
    assert "还是 raise NotImplementedError" in capsys.readouterr().out
    monkeypatch.setenv("TOOLKIT_CHECK_DEFER", "1")
    assert save("check", namespace["written"]) is None and not saved.exists()
    monkeypatch.delenv("TOOLKIT_CHECK_DEFER")
    assert save("check", namespace["written"]) == saved and "PIECE = written" in saved.read_text(encoding="utf-8")


def test_every_case_is_the_same_on_every_run():
    """The capstone's stored outputs are compared by nbval: the runs are deterministic."""
    for case in CASES:
        assert run_case(case) == run_case(case), case.key


def test_the_sample_toolkit_is_what_save_writes(sample):
    """The sample is a student's folder as toolkit.mine writes it: every file loads and names its PIECE."""
    pieces = load()
    for slot in SLOTS:
        assert pieces[slot].ok, (slot, pieces[slot].problem)
        assert (sample / f"{slot}.py").read_text(encoding="utf-8").startswith(f"# 我的工具包：{slot}（接在 {SLOTS[slot]}）")


def test_the_toolkits_parse_and_format_pass_as_pieces_unchanged():
    """The toolkit's own pieces fit the plug-in points they stand for (a sanity check of the slots' shapes)."""
    outcome = run_case(CASE["plain"], {"parse": parse_tool_result, "format_message":
                                       lambda name, call_id, result: format_tool_message(name, call_id, result)})
    assert outcome.statuses == ("success",) and not outcome.plugin_errors
