"""The bench harness itself (python -m bench): row selection, statistics, JSON output.

Only the harness is tested here, quickly; the benchmarks themselves are not run
by pytest (bench/ is outside testpaths). One real row runs in --quick mode.
"""
from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bench import _stats, across, classroom, longrun, notebooks, overhead, run  # importable from the repo root: pytest's pythonpath
from toolkit import ToolExecutor


def _strict_json(path: Path) -> dict:
    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON constant {token} in {path}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_quick_parse_row_writes_strict_json_with_machine_facts(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert run.main(["--quick", "--only", "2", "--out", str(out)]) == 0
    report = _strict_json(out)
    assert report["quick"] is True
    assert [r["key"] for r in report["rows"]] == ["parse"]
    facts = report["machine"]
    assert facts["cpu_count"] >= 1 and facts["python"].startswith("3.")
    assert set(run.PACKAGES) <= set(facts["packages"])
    row = report["rows"][0]
    assert row["status"] == "ok" and row["targets"]
    assert all(t["met"] in (True, False) for t in row["targets"])
    assert all(r["time_ms"]["median"] > 0 for r in row["data"]["records"]["1000"].values())
    assert "parse_tool_result" in capsys.readouterr().out


def test_markdown_renders_an_existing_results_file(tmp_path, capsys):
    out = tmp_path / "r.json"
    report = {"rows": [{"number": "9", "en": "demo", "status": "ok",
                        "lines": [{"en": "speed", "value": 1.5, "unit": "s", "spread": 0.1}],
                        "targets": [_stats.target("快", "fast", 1.5, "<", 1.0, "s")]}]}
    out.write_text(json.dumps(report), encoding="utf-8")
    assert run.main(["--markdown", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| | speed | 1.5 s (±5%) | | |" in text
    assert "| | target: fast | 1.5 s | < 1 | **no** |" in text


def test_select_rows_accepts_numbers_and_keys_in_table_order():
    picked = run.select_rows("parallel,1")
    assert [num for num, _ in picked] == ["1", "3"]
    assert len(run.select_rows(None)) == len(run.ROWS)


def test_unknown_row_is_a_usage_error_that_lists_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--only", "99,overhead"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "未知的行：99" in err and "1=overhead" in err and "7=charts" in err


def test_a_failing_row_is_recorded_as_error_and_later_rows_still_run():
    def boom(quick: bool = False) -> dict:
        raise RuntimeError("故意失败")

    broken = types.SimpleNamespace(KEY="broken", TITLE="坏的行", EN="broken", run=boom)
    fine = types.SimpleNamespace(KEY="fine", TITLE="好的行", EN="fine",
                                 run=lambda quick=False: _stats.row("fine", "好的行", "fine"))
    rows = run.run_rows([("1", broken), ("2", fine)], quick=True, echo=False)
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert "RuntimeError: 故意失败" in rows[0]["note"]
    assert "== 1. 坏的行 [error]" in run.format_table({"rows": rows})


def test_nan_becomes_null_in_the_written_file(tmp_path):
    out = tmp_path / "sub" / "r.json"
    run.write_json({"x": math.nan, "y": [math.inf, 1.0]}, out)
    assert _strict_json(out) == {"x": None, "y": [None, 1.0]}
    assert not out.with_name("r.json.tmp").exists()


def test_rounds_rotate_which_contender_goes_first():
    order: list[str] = []
    contenders = {name: (lambda n=name: order.append(n) or 0.0) for name in "abc"}
    results = _stats.interleaved(contenders, rounds=3, warmup=False)
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert all(len(v) == 3 for v in results.values())


def test_summarize_reports_median_quartiles_and_relative_spread():
    s = _stats.summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (s["median"], s["p25"], s["p75"], s["min"], s["max"], s["n"]) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert s["spread"] == pytest.approx(2.0 / 3.0)
    with pytest.raises(ValueError):
        _stats.summarize([])


def test_targets_say_met_missed_or_unmeasured():
    assert _stats.target("a", "a", 0.2, "<=", 0.33)["met"] is True
    assert _stats.target("a", "a", 7.0, "<", 5.0)["met"] is False
    assert _stats.target("a", "a", None, "<", 5.0)["met"] is None
    with pytest.raises(ValueError):
        _stats.target("a", "a", 1.0, "==", 1.0)


def test_every_overhead_contender_runs_and_ours_keeps_history():
    for name in ("tenacity", "stamina"):  # benchmark-only: python -m pip install -r requirements-bench.txt
        pytest.importorskip(name, reason=f"{name} is a benchmark-only dependency (requirements-bench.txt)")
    executor = ToolExecutor(max_retries=overhead.MAX_RETRIES)

    async def measure() -> dict:
        both = {**overhead.noop_contenders(5, executor),
                **{f"real_{k}": v for k, v in overhead.realistic_contenders(5, executor).items()}}
        return await _stats.ainterleaved(both, rounds=2)

    times = asyncio.run(measure())
    assert all(len(v) == 2 and all(t > 0 for t in v) for v in times.values())
    assert len(executor.call_history) == 3 * 5 * 3  # execute, real execute, run_tool_call: warm-up + 2 rounds
    assert all(r.ok and r.trace for r in executor.call_history)


def test_notebook_row_finds_notebooks_and_sums_cell_times_per_notebook(tmp_path):
    (tmp_path / "01_parse.ipynb").write_text(notebooks.EMPTY_NOTEBOOK, encoding="utf-8")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "01_parse-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    assert [p.name for p in notebooks.find_notebooks(tmp_path)] == ["01_parse.ipynb"]
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuites><testsuite>'
                     '<testcase classname="notebooks.01_parse.ipynb" name="Cell 0" time="1.5"/>'
                     '<testcase classname="notebooks.01_parse.ipynb" name="Cell 1" time="0.25"/>'
                     '<testcase classname="notebooks.02_retry.ipynb" name="Cell 0" time="2"/>'
                     '</testsuite></testsuites>', encoding="utf-8")
    assert notebooks.per_notebook(junit) == {"01_parse.ipynb": 1.75, "02_retry.ipynb": 2.0}


def test_long_run_row_takes_fifty_turns_and_clearing_sends_less_for_the_same_outcome():
    result = longrun.run(quick=True)  # one round: each contender runs the whole task once
    assert result["status"] == "ok" and all(t["met"] is True for t in result["targets"])
    runs = result["data"]["contenders"]
    assert list(runs) == ["none", "chapter", "everything"]
    turns = {name: r["turns"]["median"] for name, r in runs.items()}
    assert min(turns.values()) >= longrun.MIN_TURNS and len(set(turns.values())) == 1, turns
    totals = [runs[name]["total_chars"]["median"] for name in runs]
    assert totals[0] > totals[1] > totals[2]  # the tighter the policy, the less the model is sent
    for name in ("chapter", "everything"):
        r = runs[name]
        assert r["same_outcome_as_none"] is True
        assert r["total_ratio_to_none"]["median"] == pytest.approx(totals[list(runs).index(name)] / totals[0])
        assert r["clear_calls_per_run"]["median"] == turns[name]  # clearing runs before every model call
        assert 0 < r["clear_share_of_run"]["median"] < 1
    others = {r["final_other_chars_seed0"] for r in runs.values()}
    assert len(others) == 1  # clearing touches tool results only, never the model's calls and notes
    assert runs["everything"]["final_tool_chars_seed0"] < runs["none"]["final_tool_chars_seed0"]
    sizes = runs["none"]["sizes_seed0"]
    assert len(sizes) == turns["none"] and sizes == sorted(sizes)  # uncleared, the context only grows


def test_notebook_row_refuses_a_before_tree_without_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_BEFORE", str(tmp_path))
    with pytest.raises(ValueError, match="BENCH_BEFORE"):
        notebooks.run(quick=True)


def test_notebook_row_reports_every_notebook_and_chapters_00_to_09_like_for_like(tmp_path, monkeypatch):
    """Row 5's target is over every chapter; chapters 00-09 run again beside a floor of ten, in the same rounds."""
    names = [f"{i:02d}_chapter.ipynb" for i in range(12)]
    for name in names:
        (tmp_path / name).write_text(notebooks.EMPTY_NOTEBOOK, encoding="utf-8")
    monkeypatch.setattr(notebooks, "NOTEBOOKS", tmp_path)
    monkeypatch.delenv("BENCH_BEFORE", raising=False)
    ran: list[list[str]] = []

    def fake_nbval(target, junit, root=notebooks.ROOT):
        paths = target if isinstance(target, list) else sorted(Path(target).glob("*.ipynb"))
        ran.append([p.name for p in paths])
        seconds = sum(1.0 if p.name.startswith("empty") else 3.0 if p.name >= "10" else 2.0 for p in paths)
        return seconds, 0, ""

    def fake_imports(folder, chapters):  # one notebook per chapter, named like it (the kernels are not started here)
        for path in chapters:
            (folder / path.name).write_text(notebooks.EMPTY_NOTEBOOK, encoding="utf-8")
        return {path.name: 1 for path in chapters}

    monkeypatch.setattr(notebooks, "run_nbval", fake_nbval)
    monkeypatch.setattr(notebooks, "make_import_notebooks", fake_imports)
    result = notebooks.run(quick=True)
    assert sorted(map(len, ran)) == [10, 10, 12, 12, 12]  # floor, suite, import floor, and the two of chapters 00-09
    assert names[:10] in ran
    value = {x["en"]: x["value"] for x in result["lines"]}
    assert value["ratio suite / floor"] == pytest.approx((10 * 2 + 2 * 3) / 12)
    assert value["ratio chapters 00–09 / their floor (like for like with the ten-notebook figures recorded before)"] \
        == pytest.approx(2.0)
    assert result["targets"][0]["value"] == pytest.approx(26 / 12)  # the target stays over every notebook
    for extra in names[10:]:
        (tmp_path / extra).unlink()
    ran.clear()
    only_ten = notebooks.run(quick=True)
    assert sorted(map(len, ran)) == [10, 10, 10] and "ratio_00_09" not in only_ten["data"]  # no second view of the same


def test_import_floor_notebook_imports_what_it_is_given_and_nothing_else(tmp_path):
    """Row 5's import floor: a chapter's modules are imported, and an optional import the chapter did not make
    fails there too (else the floor would pay for modules the chapter never loaded)."""
    (tmp_path / "lesson_a.py").write_text("try:\n    import lesson_b\n    HAS_B = True\nexcept ImportError:\n"
                                          "    HAS_B = False\n", encoding="utf-8")
    (tmp_path / "lesson_b.py").write_text("", encoding="utf-8")
    for names, has_b in ((["lesson_a"], False), (["lesson_a", "lesson_b"], True)):
        cell = "".join(json.loads(notebooks.imports_notebook(names))["cells"][0]["source"])
        probe = (cell + "\nimport sys, lesson_a\nprint(lesson_a.HAS_B, 'lesson_b' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [str(has_b), str(has_b)]


def test_modules_of_reads_a_kernels_modules_after_the_notebook_ran(tmp_path):
    nb = json.loads(notebooks.EMPTY_NOTEBOOK)
    nb["cells"][0]["source"] = ["import colorsys"]
    path = tmp_path / "uses_colorsys.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    names = notebooks.modules_of(path)
    assert "colorsys" in names and "sys" in names
    empty = tmp_path / "empty.ipynb"
    empty.write_text(notebooks.EMPTY_NOTEBOOK, encoding="utf-8")
    assert "colorsys" not in notebooks.modules_of(empty)


# --- bench.across: other commits' toolkits side by side -------------------------------------------------

def _toolkit_copy(dest: Path, slower: bool = False) -> Path:
    """A tree holding a copy of this checkout's toolkit; `slower` makes every execute() wait 1 ms more."""
    import shutil

    tree = dest / ("slower" if slower else "same")
    shutil.copytree(Path(across.ROOT) / "toolkit", tree / "toolkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if slower:
        with (tree / "toolkit" / "executor.py").open("a", encoding="utf-8") as f:
            f.write("\n\n_fast_execute = ToolExecutor.execute\n\n\n"
                    "async def _slow_execute(self, *args, **kwargs):\n"
                    "    import time\n    time.sleep(0.001)\n    return await _fast_execute(self, *args, **kwargs)\n\n\n"
                    "ToolExecutor.execute = _slow_execute\n")
    return tree


def test_across_measures_the_toolkit_of_the_tree_it_is_given(tmp_path):
    same, slower = _toolkit_copy(tmp_path), _toolkit_copy(tmp_path, slower=True)
    fast = across.measure_in(same, rounds=2, calls=30)
    slow = across.measure_in(slower, rounds=2, calls=30)
    assert Path(fast["toolkit"]).is_relative_to(same) and Path(slow["toolkit"]).is_relative_to(slower)
    assert 0 < fast["none"] < 500 and 0 < fast["dict"] < 500  # µs per call: a toolkit, not a sleep
    assert slow["none"] > 900 and slow["dict"] > 900  # the 1 ms added to each call is seen, in both contenders


def test_across_extracts_a_commits_toolkit_and_refuses_an_unknown_rev(tmp_path):
    if subprocess.run(["git", "-C", str(across.ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    tree = across.extract("HEAD", tmp_path)
    assert (tree / "toolkit" / "executor.py").read_bytes() == subprocess.run(
        ["git", "-C", str(across.ROOT), "show", "HEAD:toolkit/executor.py"], capture_output=True).stdout
    assert not (tree / "notebooks").exists()  # only the toolkit is extracted
    assert across.extract(".", tmp_path) == across.ROOT
    with pytest.raises(ValueError, match="no-such-rev"):
        across.extract("no-such-rev", tmp_path)


def test_across_compares_in_rotating_processes_and_gives_ratios_to_the_first(tmp_path, monkeypatch):
    calls = []

    def fake_measure(tree, rounds, calls_per_round):
        calls.append(tree.name)
        return {"toolkit": str(tree / "toolkit" / "__init__.py"), "none": 2.0 if tree.name == "a" else 3.0,
                "dict": 4.0 if tree.name == "a" else 2.0}

    monkeypatch.setattr(across, "extract", lambda rev, dest: dest / rev)
    monkeypatch.setattr(across, "measure_in", fake_measure)
    result = across.compare(["a", "b"], processes=2, rounds=1, calls=1)
    assert calls == ["a", "b", "b", "a"]  # the order rotates, so drift hits both alike
    assert result["median_us"] == {"a": {"none": 2.0, "dict": 4.0}, "b": {"none": 3.0, "dict": 2.0}}
    assert result["ratio_to_first"]["b"] == {"none": 1.5, "dict": 0.5}
    assert result["per_process_us"]["b"]["none"] == [3.0, 3.0]


def test_across_command_says_in_one_line_what_it_could_not_measure(capsys):
    if subprocess.run(["git", "-C", str(across.ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    assert across.main(["no-such-rev", "--processes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("无法测量：git archive no-such-rev") and "Traceback" not in err


def test_class_row_counts_the_students_that_fit_beside_the_system_and_the_hub():
    gib, mib = 2**30, 2**20
    assert classroom.students_fit(256 * mib, 0, memory=16 * gib, system=gib) == 60  # 15 GiB / 256 MiB
    assert classroom.students_fit(256 * mib, 512 * mib, memory=16 * gib, system=gib) == 58
    assert classroom.students_fit(256 * mib, 16 * gib) == 0  # no room at all is none, not a negative class
    with pytest.raises(ValueError, match="positive"):
        classroom.students_fit(0, 0)


def test_class_row_is_skipped_with_the_reason_where_a_trial_class_cannot_run(monkeypatch):
    from classroom import trial

    monkeypatch.setattr(trial, "cannot_run", lambda: "a trial class needs root: the Hub starts each server as its account")
    result = classroom.run(quick=True)
    assert result["status"] == "skipped" and "needs root" in result["note"]
    assert result["lines"] == [] and result["targets"] == []
