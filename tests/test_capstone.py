"""The capstone: the student's whole agent beside the toolkit's, each difference a real one put on the piece that
made it, in a sentence a student can act on; nothing a piece does (missing, unloadable, raising, exiting) crashes
the comparison.

The pieces are the chapters' own (tests/chapters_my_toolkit: what chapters 01-07 save, checked against the chapters
by the passes that run them filled in), and copies of them with one typical bug planted, edited in the saved file as a
student would."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from toolkit.capstone import CASES, Outcome, compare, run_case
from toolkit.capstone.outcome import _parted, object_of
from toolkit.mine import SLOTS, Piece, load, toolkit_piece
from toolkit.verify import check_answer

CHAPTERS = Path(__file__).resolve().parent / "chapters_my_toolkit"
CASE = {c.key: c for c in CASES}
PLUGGED = ("parse", "truncate", "retry", "format_message", "evaluate", "executor")


def copy_of_chapters(folder: Path) -> Path:
    target = folder / "my_toolkit"
    shutil.copytree(CHAPTERS, target, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    return target


@pytest.fixture
def chapters(tmp_path, monkeypatch) -> Path:
    folder = copy_of_chapters(tmp_path)
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def chapters_comparison(tmp_path_factory):
    folder = copy_of_chapters(tmp_path_factory.mktemp("chapters"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLKIT_MY_DIR", str(folder))
        return compare()


# --- what the comparison says is true -------------------------------------------------------------------------

EXCERPTS = re.compile(r"你的「(.*?)」，toolkit 的「(.*?)」")


def read(message: str):
    """A tool message as the model reads it: its JSON fields, a null field counting as absent (but for the four
    every message carries), or its text."""
    fields = object_of(message)
    if fields is None:
        return message
    return {k: v for k, v in fields.items() if v is not None or k in ("status", "result", "error", "decision")}


def assert_real(diff: list[str], mine, theirs) -> None:
    """No sentence holds two excerpts that read the same, and no difference is reported where none is."""
    for sentence in diff:
        for yours, toolkit in EXCERPTS.findall(sentence):
            assert yours != toolkit, sentence
    same_messages = [read(m) for m in mine.messages] == [read(m) for m in theirs.messages]
    if not diff:
        assert same_messages and mine.answer == theirs.answer and mine.verdict == theirs.verdict
        assert mine.statuses == theirs.statuses and not mine.errors


def test_the_chapters_agent_passes_every_case_the_toolkits_passes(chapters_comparison):
    result = chapters_comparison
    assert set(result.saved) == set(SLOTS) - {"check"}
    passed = [c.key for c in CASES if result.toolkit[c.key].passed]
    assert passed == ["plain", "timeouts", "bad_row", "long"] and result.failed() == []
    assert all(not result.mine[key].errors and result.mine[key].statuses == result.toolkit[key].statuses
               for key in passed)
    assert result.summary().startswith("✔ 验收：toolkit 的 agent 通过的 4 个用例")


def test_every_difference_reported_is_a_real_one(chapters_comparison):
    result = chapters_comparison
    for case in CASES:
        assert_real(result.mine[case.key].differs_from(result.toolkit[case.key]), result.mine[case.key],
                    result.toolkit[case.key])
        for slot in result.saved:
            alone = result.single[(case.key, slot)]
            assert_real(alone.differs_from(result.toolkit[case.key]), alone, result.toolkit[case.key])


def test_the_chapters_differences_are_said_as_what_the_model_read():
    """The issue's case: the toolkit's marker has blank lines around it, the chapter's has not; the two results
    part there, and the excerpts show it (they used to be two identical endings)."""
    outcome, toolkit = run_case(CASE["long"], {"truncate": load_truncate()}), run_case(CASE["long"])
    [sentence] = [d for d in outcome.differs_from(toolkit) if d.startswith("result")]
    yours, theirs = EXCERPTS.search(sentence).groups()
    assert "\\n…（已省略" in yours and "\\n\\n…（已省略" in theirs and yours != theirs


@given(st.text(st.sampled_from("ab\n\\…"), max_size=60), st.text(st.sampled_from("ab\n\\…"), max_size=60))
def test_two_different_texts_never_read_the_same(mine, theirs):
    assume(mine != theirs)
    yours, toolkit, at = _parted(mine, theirs)
    assert yours != toolkit and mine[:at] == theirs[:at]


def test_a_decision_that_differs_beyond_its_action_and_suggestion_is_shown_from_where_it_parts():
    def message(decision):
        return json.dumps({"status": "success", "result": 1, "error": None, "decision": decision})

    extra = Outcome(("success",), (message({"action": "x", "suggestion": "s", "data": 1}),), "答", "通过")
    plain = Outcome(("success",), (message({"action": "x", "suggestion": "s"}),), "答", "通过")
    [sentence] = extra.differs_from(plain)
    assert sentence.startswith("decision 从第") and '"data": 1' in sentence


def load_truncate():
    ns: dict = {}
    exec(compile((CHAPTERS / "truncate.py").read_text(encoding="utf-8"), "truncate.py", "exec"), ns)
    return ns["PIECE"]


def test_the_toolkits_own_pieces_in_the_students_slots_make_no_difference():
    """Attribution can be trusted only if a piece that behaves like the toolkit's is found to: no difference, in
    any slot the toolkit has a piece of that shape for (the executor built with the toolkit's pieces too)."""
    def check(answer, results):  # the toolkit's answer check, as a student might wrap it
        return check_answer(answer, *results) if results else None

    same = {slot: Piece(slot, toolkit_piece(slot), None) for slot in PLUGGED}
    result = compare({**same, "check": Piece("check", check, None), "loop": Piece("loop", None, "还没有保存")})
    assert result.saved == [*PLUGGED, "check"]
    for slot in result.saved:
        assert result.differences(slot) == {}, slot
    assert all(not result.mine[c.key].differs_from(result.toolkit[c.key]) for c in CASES)


# --- one typical bug per piece: the capstone names the piece, with a reason to act on -----------------------------

BUGS = {  # slot -> (the chapter's line, the bug, a case where it shows, what the student reads there)
    "parse": ("PIECE = parse_as_data", "PIECE = parse_tool_result",  # chapter 01's string-returning version
              "plain", "result 是一段 JSON 文字"),
    "truncate": ("    if len(text) <= max_chars:\n        return text\n",
                 "    if len(text) <= max_chars:\n        return text\n    return text[:max_chars]\n",  # head only
                 "long", "验收不通过（toolkit：通过）：问题问的是总计，回答里没有给出总计"),
    "retry": ("        except Exception as exc:\n            info = classify_error(exc)\n",
              "        except ConnectionError as exc:\n            info = classify_error(exc)\n"
              "        except Exception as exc:\n            return None, str(exc)\n",  # only connections retried
              "timeouts", "执行器交给模型的结果是 error（TIMEOUT）（toolkit：success）"),
    "format_message": ('        "error_type": result.error_type,', "",  # the model cannot tell retryable from fatal
                       "bad_row", "模型读到的 tool 消息里没有 error_type（toolkit 的有）"),
    "evaluate": ('        if result.error_type == "retryable":', "        if True:",  # every failure is "retry"
                 "bad_row", "模型读到的决定是 retry（toolkit：report_error）"),
    "executor": ("                info = error_from_envelope(value)", "                info = None",
                 "bad_row", "你的 executor 出错"),  # an error envelope taken for a success
    "loop": ('    content["decision"] = {"action": decision["action"], "suggestion": decision.get("suggestion")}\n',
             "",  # the decision never reaches the model
             "bad_row", "模型读到的 tool 消息里没有 decision（toolkit 的有）"),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """slot -> the comparison of the chapters' pieces with that slot's bug planted in its saved file."""
    found = {}
    for slot, (line, bug, _, _) in BUGS.items():
        folder = copy_of_chapters(tmp_path_factory.mktemp(slot))
        path = folder / f"{slot}.py"
        text = path.read_text(encoding="utf-8")
        assert text.count(line) == 1, (slot, line)
        path.write_text(text.replace(line, bug), encoding="utf-8")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TOOLKIT_MY_DIR", str(folder))
            found[slot] = compare()
    return found


@pytest.mark.parametrize("slot", list(BUGS))
def test_a_planted_bug_is_put_on_its_piece_with_a_reason(slot, planted, chapters_comparison):
    result, (_, _, case, reason) = planted[slot], BUGS[slot]
    assert reason in " ".join(result.differences(slot)[case]), result.differences(slot)[case]
    for other in result.saved:  # the other pieces behave as the chapters' do
        if other != slot:
            assert result.differences(other) == chapters_comparison.differences(other), other
    for key in result.failed():  # where the whole agent fails a case the toolkit passes, the summary names it
        assert f"只换上你的 {slot}" in result.blame(key)
    worse = [c.key for c in CASES if result.mine[c.key].severity(result.toolkit[c.key]) >= 2]
    assert (case in worse) == (slot in ("parse", "truncate", "retry", "evaluate", "executor"))
    if case in worse:
        assert f"只换上你的 {slot}" in result.summary()


def test_every_difference_of_the_planted_bugs_is_a_real_one(planted):
    for result in planted.values():
        for case in CASES:
            for slot in result.saved:
                alone = result.single[(case.key, slot)]
                assert_real(alone.differs_from(result.toolkit[case.key]), alone, result.toolkit[case.key])


# --- nothing a piece does crashes the comparison ------------------------------------------------------------------

def test_with_nothing_saved_every_case_runs_on_the_toolkits_pieces_and_says_which_are_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_MY_DIR", str(tmp_path / "empty"))
    result = compare()
    assert result.saved == [] and not result.single
    assert all(result.mine[c.key] == result.toolkit[c.key] for c in CASES)
    assert result.pieces_table().count("还没有保存") == len(SLOTS)
    assert "第 01–07 章和练习 07" in result.by_piece()


def test_an_unloadable_file_is_one_missing_piece_and_the_rest_still_run(chapters):
    (chapters / "retry.py").write_text("def call_tool_with_retry(:\n", encoding="utf-8")
    pieces = load()
    assert not pieces["retry"].ok and "加载失败" in pieces["retry"].problem
    result = compare(pieces)
    assert "retry" not in result.saved and "truncate" in result.saved and "加载失败" in result.pieces_table()
    assert result.failed() == []  # the executor got the toolkit's retry for the missing one


@pytest.mark.parametrize("slot, broken", [
    ("parse", lambda raw, max_chars: 1 / 0),
    ("truncate", lambda text, max_chars: None),
    ("retry", lambda tool_fn, *a, max_retries=3, **k: "not a pair"),
    ("format_message", lambda name, call_id, result: 42),
    ("evaluate", lambda result, question: (_ for _ in ()).throw(RuntimeError("坏了"))),
    ("check", lambda answer, results: [][0]),
])
def test_a_broken_plug_in_is_an_error_for_that_piece_never_a_crash(slot, broken):
    case = CASE["long"] if slot in ("parse", "truncate") else CASE["plain"]
    outcome = run_case(case, {slot: broken})
    assert outcome.errors and slot in outcome.errors[0], outcome
    if slot != "check":  # the check runs after the answer: the model's run is untouched by it
        assert any("PLUGIN_ERROR" in s for s in outcome.statuses) or "插件" in outcome.errors[0]


class _Refuses:
    def __init__(self, **settings):
        raise RuntimeError("构造失败")


async def _loop_that_raises(question, client, model, executor, **pieces):
    raise KeyError("messages")


async def _loop_that_returns_text(question, client, model, executor, **pieces):
    return "回答"


@pytest.mark.parametrize("slot, piece, says", [
    ("executor", _Refuses, "你的 executor 出错"),
    ("loop", _loop_that_raises, "你的 loop 出错"),
    ("loop", _loop_that_returns_text, "应返回 (回答, messages)"),
])
def test_an_executor_or_loop_that_fails_ends_its_run_with_its_name(slot, piece, says):
    outcome = run_case(CASE["plain"], {slot: piece})
    assert outcome.unfinished and says in outcome.errors[0]
    assert outcome.differs_from(run_case(CASE["plain"]))[0] == outcome.errors[0]


@pytest.mark.parametrize("slot, exits", [
    ("parse", lambda raw, max_chars: sys.exit(1)),
    ("truncate", lambda text, max_chars: sys.exit()),
    ("retry", lambda tool_fn, *a, max_retries=3, **k: sys.exit("再见")),
    ("format_message", lambda name, call_id, result: sys.exit(0)),
    ("evaluate", lambda result, question: sys.exit(2)),
    ("check", lambda answer, results: sys.exit(3)),
])
def test_a_piece_calling_sys_exit_is_an_error_for_that_piece(slot, exits):
    case = CASE["long"] if slot in ("parse", "truncate") else CASE["plain"]
    outcome = run_case(case, {slot: exits})
    assert outcome.errors and "sys.exit" in " ".join(outcome.errors)


def test_an_async_piece_calling_sys_exit_is_an_error_too():
    async def retry(tool_fn, *args, max_retries=3, **kwargs):
        sys.exit(1)

    outcome = run_case(CASE["plain"], {"retry": retry})
    assert outcome.errors and "sys.exit" in outcome.errors[0]


def test_a_file_calling_sys_exit_on_import_is_a_broken_piece(chapters):
    (chapters / "parse.py").write_text("import sys\nsys.exit(1)\n", encoding="utf-8")
    pieces = load()
    assert not pieces["parse"].ok and "sys.exit" in pieces["parse"].problem
    assert "parse" not in compare(pieces).saved


# --- what the student reads ---------------------------------------------------------------------------------------

def test_show_puts_the_two_runs_side_by_side_from_where_they_part(chapters_comparison):
    shown = chapters_comparison.show("timeouts", "format_message")
    assert "不同的地方：模型读到的 tool 消息里没有 attempts（toolkit 的有）" in shown
    toolkit_part, mine_part = shown.split("— 只换上你的 format_message —")
    toolkit_line = next(line for line in toolkit_part.splitlines() if "tool 消息 1" in line)
    mine_line = next(line for line in mine_part.splitlines() if "tool 消息 1" in line)
    assert '"attempts": 3' in toolkit_line and '"attempts"' not in mine_line and toolkit_line != mine_line
    with pytest.raises(ValueError, match="没有叫 'nope' 的用例"):
        chapters_comparison.show("nope")
    with pytest.raises(ValueError, match="不是你已保存的部件"):
        chapters_comparison.show("long", "clear")


def test_the_long_case_check_is_given_the_question_so_a_dump_without_the_total_fails():
    toolkit = run_case(CASE["long"])
    assert "9692" in toolkit.answer and toolkit.verdict == "通过"
    head_only = run_case(CASE["long"], {"truncate": lambda text, max_chars: text[:max_chars]})
    assert "9692" not in head_only.answer and head_only.verdict == "不通过"
    assert head_only.problems == ("问题问的是总计，回答里没有给出总计",)


def test_the_toolkits_run_of_each_case_shows_the_fault_it_is_about(chapters_comparison):
    toolkit = chapters_comparison.toolkit
    assert toolkit["plain"].statuses == ("success",) and toolkit["plain"].verdict == "通过"
    assert toolkit["timeouts"].statuses == ("success",)  # retried twice on the simulated clock
    assert toolkit["bad_row"].statuses == ("error（INVALID_SALES_CSV）",) and "第 4 行" in toolkit["bad_row"].messages[0]
    assert "总计：9692" in toolkit["long"].messages[0]
    assert toolkit["invented"].verdict == "不通过"


def test_every_case_is_the_same_on_every_run(chapters):
    """The capstone's stored outputs are compared by nbval: the runs are deterministic."""
    mine = {slot: piece.fn for slot, piece in load().items() if piece.ok}
    for case in CASES:
        assert run_case(case) == run_case(case), case.key
        assert run_case(case, mine) == run_case(case, mine), case.key


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
    assert save("check", namespace["written"], anyway=True) is None and not saved.exists()
    monkeypatch.delenv("TOOLKIT_CHECK_DEFER")
    assert save("check", namespace["written"], anyway=True) == saved
    assert "PIECE = written" in saved.read_text(encoding="utf-8")
