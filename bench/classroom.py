"""Row 11: a class on JupyterHub. What one student costs the class server, and how long a server takes to start.

The Hub of classroom/jupyterhub_config.py, driven by classroom/trial.py as tests/test_hub.py drives it: the
course installed as a class server installs it (classroom/install.sh, a venv of Debian's python3), a temporary
Hub with a teacher and N students as OS accounts (quick: 1 student, else 3). Each server is started through the
REST API, one after another, and timed to ready (wall, and the CPU its processes used); then each account opens
chapter 00 and exercise 01's solution in two kernels, runs the chapter and the solution up to its check(fn), and
the PSS of all its processes is read (the server, both kernels, the checker's referee and worker): a student with
a chapter and an exercise open who has pressed check; and the CPU seconds the chapter and the check took. The Hub with its proxy and idle culler is read once.

How many students a 4-core / 16 GB server holds follows from these: memory, (16 GiB - 1 GiB for the system -
the Hub) / a student's PSS; CPU, what every student starting a server, or running the chapter and a check, at
the same moment costs (their CPU seconds over 4 cores). Needs root (the accounts), useradd, /usr/bin/python3 and configurable-http-proxy (`npm ci` in
classroom/); skipped with the reason otherwise.
"""
from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

from ._stats import line, row, target

KEY = "class"
TITLE = "JupyterHub 上的一个班：每个学生占的内存和服务器启动时间"
EN = "A class on JupyterHub: memory per student and server start time"

ROOT = Path(__file__).resolve().parent.parent
SERVER_MEMORY = 16 * 2**30  # the server the README sizes a class for: 4 cores, 16 GB
SERVER_CORES = 4
SYSTEM_SHARE = 2**30        # what the operating system and its services keep for themselves
CLASS = 30                  # the class the target is about


def students_fit(student_bytes: float, hub_bytes: float, memory: float = SERVER_MEMORY,
                 system: float = SYSTEM_SHARE) -> int:
    """How many students, each holding `student_bytes`, fit beside the system and the Hub in `memory`."""
    if student_bytes <= 0:
        raise ValueError("a student's memory must be positive")
    return max(int((memory - system - hub_bytes) // student_bytes), 0)


def _skip(note: str) -> dict:
    return row(KEY, TITLE, EN, status="skipped", note=note)


def run(quick: bool = False) -> dict:
    """Measure row 11; status "skipped" (with the reason) where a trial class cannot run."""
    from classroom import trial

    why = trial.cannot_run()
    proxy = trial.find_proxy(ROOT)
    if not why and not proxy:
        why = "没有 configurable-http-proxy：在 classroom/ 里运行 npm ci"
    if not why and not os.access(trial.SYSTEM_PYTHON, os.X_OK):
        why = f"没有 {trial.SYSTEM_PYTHON}"
    if why:
        return _skip(f"跳过：{why}")
    students = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="trl-bench-class-") as folder:
        os.chmod(folder, 0o755)
        course = trial.course_copy(ROOT, Path(folder) / "course")
        with trial.class_env(course) as env, trial.trial_class(env, course, students, proxy=proxy) as (hub, accounts):
            measured = trial.measure(hub, accounts, course)
            hub_bytes = trial.pss(hub.processes())
    pupils = [m for m in measured if m["user"] != accounts.teacher]
    memory = statistics.median(m["pss_bytes"] for m in pupils)
    start = statistics.median(m["start_s"] for m in pupils)
    cpu = statistics.median(m["start_cpu_s"] for m in pupils)
    lesson = statistics.median(m["lesson_cpu_s"] for m in pupils)
    fit = students_fit(memory, hub_bytes)
    mib = 2**20
    lines = [
        line("每个学生（一章 + 一个练习 + check）", "per student (a chapter, an exercise, a check run), PSS",
             memory / mib, "MiB", min=min(m["pss_bytes"] for m in pupils) / mib,
             max=max(m["pss_bytes"] for m in pupils) / mib),
        line("服务器启动（REST API 到就绪）", "server start (REST API to ready)", start, "s",
             min=min(m["start_s"] for m in pupils), max=max(m["start_s"] for m in pupils)),
        line("其中 CPU", "of which CPU", cpu, "s"),
        line("第 00 章和一次 check 的 CPU", "CPU of chapter 00 and a check", lesson, "s"),
        line("Hub、代理和空闲清理", "the Hub, its proxy and the idle culler, PSS", hub_bytes / mib, "MiB"),
        line("老师（另有批改工具）", "the teacher (with the grading tools), PSS",
             next(m["pss_bytes"] for m in measured if m["user"] == accounts.teacher) / mib, "MiB"),
        line(f"16 GB 里放得下的学生（留 {SYSTEM_SHARE // 2**30} GiB 给系统）",
             f"students in 16 GB ({SYSTEM_SHARE // 2**30} GiB left to the system)", fit, "人"),
        line(f"{CLASS} 人同时开服务器：{SERVER_CORES} 核上的 CPU 时间", f"{CLASS} servers started at once: CPU time "
             f"on {SERVER_CORES} cores", CLASS * cpu / SERVER_CORES, "s"),
        line(f"{CLASS} 人同时运行第 00 章和 check：{SERVER_CORES} 核上的 CPU 时间",
             f"{CLASS} students running chapter 00 and a check at once: CPU time on {SERVER_CORES} cores",
             CLASS * lesson / SERVER_CORES, "s"),
    ]
    targets = [target(f"{CLASS} 人的班级放得进 16 GB", f"a {CLASS}-student class fits in 16 GB", fit, ">=", CLASS, "人")]
    note = (f"{students} 个学生和 1 位老师，服务器依次启动；PSS 是账号下所有进程的比例内存（共享页按进程数分摊），"
            "读于两个内核都运行完之后")
    return row(KEY, TITLE, EN, lines=lines, targets=targets, note=note,
               data={"accounts": measured, "hub_pss_bytes": hub_bytes, "students": students})
