"""The course from a non-editable install: `pip install .` in a fresh venv outside the checkout, plus the course folder.

A course image (a JupyterHub, a Docker class) installs the toolkit as a package and copies the course folder
(notebooks/, data/, …) somewhere else: the package then sits in site-packages, where there is no data/. The
tools and the chapters find data/ by one rule (toolkit.tools.course_dir): beside the package when it holds
data/input/ (a checkout), else the nearest folder from the current directory up that does (a chapter runs in
notebooks/). Here: a venv made with this interpreter, the course's dependencies seen through a .pth file (not
installed again), the toolkit installed from a copy of its source, and chapters 01 and 02, which read data/
themselves, run under nbval from a copy of the course folder; the agent's command line from the course folder.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ("01_parse_tool_result.ipynb", "02_smart_truncate.ipynb")


def run(args: list, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """(the venv's python, the course folder, the environment): the toolkit installed as a package, nowhere near
    the course folder."""
    base = tmp_path_factory.mktemp("install")
    venv.create(base / "venv", with_pip=False)
    python = base / "venv" / "bin" / "python"
    purelib = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base,
                       dict(os.environ)).stdout.strip())
    (purelib / "course-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    source = base / "source"
    shutil.copytree(ROOT / "toolkit", source / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    env = {**os.environ, "TOOLKIT_DOTENV": "none", "TOOLKIT_MY_DIR": str(base / "my_toolkit"),
           "PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}
    env.pop("TOOLKIT_DATA_DIR", None)
    done = run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", source], base, env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    course = base / "course"
    for folder in ("notebooks", "data"):
        shutil.copytree(ROOT / folder, course / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", base / "nbval_sanitize.cfg")
    return python, course, env


def test_the_installed_package_is_a_copy_and_finds_the_course_folder_from_a_chapter(installed) -> None:
    python, course, env = installed
    probe = ("import json, toolkit\nfrom toolkit.tools import course_dir, data_dir\n"
             "from toolkit.check.samples import sales_results\nfrom toolkit.simulation import course_tools_with_fault\n"
             "with course_tools_with_fault('bad_row') as registry:\n    pass\n"
             "print(json.dumps([toolkit.__file__, str(course_dir()), str(data_dir()),"
             " sales_results()['invalid'].error_code]))")
    done = run([python, "-c", probe], course / "notebooks", env)
    assert done.returncode == 0, done.stderr[-3000:]
    package, folder, data, invalid = json.loads(done.stdout)
    assert Path(package).resolve().is_relative_to(python.parents[1].resolve())  # site-packages, not the checkout
    assert Path(folder).resolve() == course.resolve() and Path(data).resolve() == (course / "data" / "input").resolve()
    assert invalid == "INVALID_SALES_CSV"  # the broken CSV of data/faults/ was found too


def test_the_chapters_that_read_data_themselves_run_from_the_course_folder(installed) -> None:
    python, course, env = installed
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-c", os.devnull,
                "--rootdir", course, "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
                course.parent / "nbval_sanitize.cfg", *(course / "notebooks" / name for name in CHAPTERS)],
               course, env, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_agents_command_line_answers_from_the_course_folder(installed) -> None:
    python, course, env = installed
    done = run([python, "-m", "toolkit.agent", "哪个类别销售额最高？总销售额是多少？"], course, env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "9692" in done.stdout and "显示器" in done.stdout, done.stdout
