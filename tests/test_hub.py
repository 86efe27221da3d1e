"""A class on JupyterHub, end to end: classroom/'s config, a teacher and two students, hand-in and grading.

The course is installed as the image installs it (classroom/install.sh into a venv of Debian's python3, outside
the checkout: the toolkit as a copy; classroom/trial.py keeps the packages between runs and installs the toolkit
afresh each time). A real JupyterHub runs classroom/jupyterhub_config.py on temporary paths and ports with the
pinned configurable-http-proxy (`npm ci` in classroom/, as .ci/run does); a teacher and two students are ordinary
OS accounts in the config's two groups, created here and removed after, whatever happens. Through the Hub's REST
API their servers start; in each, chapter 00 runs in a kernel (its outputs as stored) and a solution's check(fn)
passes. The teacher's server has the formgrader and the students' do not. The teacher writes the nbgrader course,
releases exercise 01 from the formgrader; one student fetches, solves (the fetched notebook's own check passes in
a kernel beside it) and submits, the other submits it untouched; the teacher collects and autogrades from the
formgrader, and the class report (python -m toolkit.check --class) is built from what was collected. Neither
student can read the other's files, the teacher's, or the other's hand-in. At the end nothing the test started is
still running.
"""
from __future__ import annotations

import concurrent.futures
import csv
import io
import json
import os
import re
import tempfile
from pathlib import Path

import pytest

from classroom import trial

ROOT = Path(__file__).resolve().parent.parent
PROXY = trial.find_proxy(ROOT)
ASSIGNMENT = "ex01_parse_tool_result"
COURSE_ID = "tool-result-lab"
TEACHER_TOOLS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment")


def why_not() -> str:
    why = trial.cannot_run()
    if not why and not PROXY:
        why = "no configurable-http-proxy: run `npm ci` in classroom/ (.ci/run does), or put it on PATH"
    if not why and not os.access(trial.SYSTEM_PYTHON, os.X_OK):
        why = f"the students' environment is built from {trial.SYSTEM_PYTHON}, which this machine lacks"
    return why


pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(why_not()), reason=why_not() or "-")]


def stored_outputs(path: Path) -> list[list[tuple[str, str]]]:
    """Each code cell's outputs as (kind, text): stream text and text/plain results, as the comparison sees them."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [[shown(out) for out in cell["outputs"] if shown(out)] for cell in cells if cell["cell_type"] == "code"]


def shown(out: dict) -> tuple[str, str] | None:
    def text(value) -> str:
        return re.sub(r"0x[0-9a-f]{6,16}", "0xADDRESS", value if isinstance(value, str) else "".join(value))

    if out["output_type"] == "stream":
        return out["name"], text(out["text"])
    if out["output_type"] in ("execute_result", "display_data") and "text/plain" in out["data"]:
        return "text/plain", text(out["data"]["text/plain"])
    if out["output_type"] == "error":
        return "error", f"{out['ename']}: {out['evalue']}"
    return None


def page_config(hub: trial.Hub, user: str) -> dict:
    """The JupyterLab page's configuration as the user's server serves it (its disabled extensions among it)."""
    status, page = hub.request("GET", f"/user/{user}/lab")
    assert status == 200, (status, str(page)[:300])
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def run_in(kernel: trial.Kernel, code: str) -> str:
    ran = kernel.run(code)
    assert ran.status == "ok", ran.text()[-2000:]
    return ran.text()


def form(hub: trial.Hub, user: str, path: str, **fields: str) -> dict:
    status, answer = hub.request("POST", f"/user/{user}/{path}", form=fields, timeout=300)
    assert status == 200, (status, str(answer)[-2000:])
    return answer


def test_a_class_on_the_hub_runs_the_course_and_hands_in_and_grades_exercise_01() -> None:
    with tempfile.TemporaryDirectory(prefix="trl-class-course-") as folder:
        os.chmod(folder, 0o755)
        course = trial.course_copy(ROOT, Path(folder) / "course")
        with trial.class_env(course) as env, trial.trial_class(env, course, 2, proxy=PROXY) as (hub, accounts):
            a_class(hub, accounts, course)


def a_class(hub: trial.Hub, accounts: trial.Accounts, course: Path) -> None:
    teacher, (solver, idler) = accounts.teacher, accounts.student_names
    everyone = [teacher, solver, idler]

    # the config's idle culler runs beside the Hub, as its service
    assert any("jupyterhub_idle_culler" in trial.command_line(pid) for pid in hub.processes())
    # log-in is the account's password, for the config's groups (PAM)
    accounts.set_password(solver, "a-class-password-1")
    assert hub.login(solver, "a-class-password-1") and not hub.login(solver, "wrong-password")

    for name in everyone:
        hub.add_user(name)
        hub.start_server(name)
    for name in everyone:
        hub.wait_ready(name)

    # the teacher's tools are the teacher's: the formgrader answers, and JupyterLab loads them, for the teacher only
    assert hub.request("GET", f"/user/{teacher}/formgrader/api/status")[0] == 200
    assert hub.request("GET", f"/user/{teacher}/formgraders")[0] == 200  # the course list
    for name in (solver, idler):
        assert hub.request("GET", f"/user/{name}/formgrader/api/status")[0] == 404
        assert hub.request("GET", f"/user/{name}/formgraders")[0] == 404
        assert set(TEACHER_TOOLS) <= set(page_config(hub, name)["disabledExtensions"])
    assert not set(TEACHER_TOOLS) & set(page_config(hub, teacher)["disabledExtensions"])

    # in each server, side by side: chapter 00 as stored, and a solution's check(fn) in the same kernel
    with concurrent.futures.ThreadPoolExecutor(len(everyone)) as pool:
        kernels = dict(zip(everyone, pool.map(lambda name: lesson(hub, name, course), everyone)))
    try:
        grade(hub, accounts, kernels)
    finally:
        for kernel in kernels.values():
            kernel.close()
    with concurrent.futures.ThreadPoolExecutor(len(everyone)) as pool:  # as the admin page's "stop all" does
        list(pool.map(hub.stop_server, everyone))


def lesson(hub: trial.Hub, name: str, course: Path) -> trial.Kernel:
    """Chapter 00 and exercise 01's solution up to its check(fn), in one kernel of `name`'s server, left open."""
    chapter = course / "notebooks" / "00_overview.ipynb"
    [solution] = (course / "solutions").glob("sol01_*.ipynb")
    kernel = trial.Kernel(hub, name, f"notebooks/{chapter.name}")
    fresh = [[shown(o) for o in kernel.run(code).outputs if shown(o)] for code in trial.notebook_code(chapter)]
    assert fresh == stored_outputs(chapter), name
    where = run_in(kernel, "import toolkit, toolkit.mine\nfrom toolkit.tools import data_dir\n"
                           "print(toolkit.__file__, data_dir(), toolkit.mine.folder(), sep='\\n')")
    home = Path(os.path.expanduser(f"~{name}"))
    package, data, mine = where.split()
    assert "site-packages" in package and not package.startswith(str(course))  # the installed copy
    assert (Path(data), Path(mine)) == (home / "course" / "data" / "input", home / "course" / "my_toolkit")
    for code in trial.up_to_check(solution):
        printed = run_in(kernel, code)
    assert "全部通过" in printed, printed
    return kernel


def grade(hub: trial.Hub, accounts: trial.Accounts, kernels: dict[str, trial.Kernel]) -> None:
    """Exercise 01 through nbgrader: released, fetched, solved by one student, handed in by both, collected,
    autograded; the class report from what was collected; no student reaching another's files."""
    teacher, (solver, idler) = accounts.teacher, accounts.student_names
    [solution] = (hub.course / "solutions").glob("sol01_*.ipynb")
    # the teacher writes the nbgrader course (a terminal's command in ~/course) and releases exercise 01
    desk = kernels[teacher]
    built = run_in(desk, "import os, subprocess, sys\nos.chdir('..')\n"
                         "print(subprocess.run([sys.executable, '-m', 'toolkit.check.build', '--nbgrader', 'grading'],"
                         " capture_output=True, text=True))")
    assert "returncode=0" in built, built
    assert form(hub, teacher, f"formgrader/api/assignment/{ASSIGNMENT}/assign")["success"]
    assert form(hub, teacher, f"formgrader/api/assignment/{ASSIGNMENT}/release")["success"]

    # the students fetch it from their assignment list; one solves it, the other hands it in untouched
    for name in (solver, idler):
        listed = hub.request("GET", f"/user/{name}/assignments?course_id={COURSE_ID}")[1]
        assert [(a["assignment_id"], a["status"]) for a in listed["value"]] == [(ASSIGNMENT, "released")]
        fetched = form(hub, name, "assignments/fetch", course_id=COURSE_ID, assignment_id=ASSIGNMENT)
        assert [a["status"] for a in fetched["value"]] == ["fetched"]
    solve(hub, solver, solution)
    for name in (solver, idler):
        submitted = form(hub, name, "assignments/submit", course_id=COURSE_ID, assignment_id=ASSIGNMENT)
        assert {a["status"] for a in submitted["value"]} == {"fetched", "submitted"}

    # each student sees only their own files, in the homes and in the exchange
    inbound = hub.exchange / COURSE_ID / "inbound"
    for name, other in ((solver, idler), (idler, solver)):
        places = [os.path.expanduser(f"~{other}"), os.path.expanduser(f"~{teacher}/course/grading"), str(inbound)]
        peek = run_in(kernels[name], f"import os\nfor path in {places!r}:\n"
                                     "    try:\n        os.listdir(path); print('read', path)\n"
                                     "    except PermissionError:\n        print('refused', path)\n")
        assert "read" not in peek and peek.count("refused") == 3, peek
        listed = hub.request("GET", f"/user/{name}/assignments?course_id={COURSE_ID}")[1]["value"]
        assert {s["student_id"] for a in listed if a["status"] == "submitted" for s in a["submissions"]} == {name}
        status, own = hub.api("POST", f"/hub/api/users/{name}/tokens", {"note": "trial", "expires_in": 600})
        assert status == 201, own
        assert hub.request_as(own["token"], "GET", f"/user/{name}/api/contents")[0] == 200
        assert hub.request_as(own["token"], "GET", f"/user/{other}/api/contents")[0] in (403, 404)

    # the teacher collects and autogrades from the formgrader: the points come from the checker
    assert form(hub, teacher, f"formgrader/api/assignment/{ASSIGNMENT}/collect")["success"]
    for name in (solver, idler):
        graded = form(hub, teacher, f"formgrader/api/submission/{ASSIGNMENT}/{name}/autograde")
        assert graded["success"], graded
    scores = {s["student"]: (s["score"], s["max_score"])
              for s in hub.request("GET", f"/user/{teacher}/formgrader/api/submissions/{ASSIGNMENT}")[1]}
    total = len(json.loads(run_in(desk, "import json\nfrom toolkit.check import get_exercise\n"
                                        "print(json.dumps([c.id for c in get_exercise('01').checks]))")))
    assert scores == {solver: (total, total), idler: (0, total)}

    # and the class report, from what was collected
    report = run_in(desk, "done = subprocess.run([sys.executable, '-m', 'toolkit.check', '--class', 'grading/submitted',"
                          " '--csv', 'report.csv'], capture_output=True, text=True)\n"
                          "print(done.returncode)\nprint(open('report.csv', encoding='utf-8-sig').read())")
    code, table = report.split("\n", 1)
    assert code == "0", report
    rows = {row["student"]: (row["exercise"], row["status"], row["passed"], row["total"])
            for row in csv.DictReader(io.StringIO(table))}
    assert rows == {solver: ("01", "done", str(total), str(total)), idler: ("01", "not_started", "0", str(total))}, table


def solve(hub: trial.Hub, student: str, solution: Path) -> None:
    """The student's answer: the solution's answer cell in the fetched notebook's solution cell, saved through
    the contents API as JupyterLab saves; then the notebook's cells up to its check, in a kernel beside it."""
    path = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    status, model = hub.request("GET", f"/user/{student}/api/contents/{path}?content=1")
    assert status == 200, model
    answer = next(code for code in trial.notebook_code(solution) if "### BEGIN SOLUTION" in code)
    [cell] = [c for c in model["content"]["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    cell["source"] = answer
    status, saved = hub.request("PUT", f"/user/{student}/api/contents/{path}",
                                {"type": "notebook", "format": "json", "content": model["content"]})
    assert status == 200, saved
    beside = trial.Kernel(hub, student, path)
    try:
        cells = [c["source"] for c in model["content"]["cells"] if c["cell_type"] == "code"]
        for code in cells[:next(n for n, c in enumerate(cells) if c.strip().startswith("check(")) + 1]:
            printed = run_in(beside, code)
        assert "全部通过" in printed, printed
    finally:
        beside.close()
