"""Makes the whole test session hermetic, notebooks included.

nbval's kernels inherit this process's environment, so the settings that pick a
model are removed here, before any kernel starts: every test and notebook talks
to the offline stand-in model, whatever a developer's shell or .env says.
"""
import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest

for _name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "MODEL_NAME", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
os.environ["TOOLKIT_DOTENV"] = "none"  # never read the project's .env during tests
# chapters save the student's pieces (toolkit.mine.save): under test into a throwaway my_toolkit/, so running
# the suite never overwrites a student's own saved work in the project folder
os.environ["TOOLKIT_MY_DIR"] = _SESSION_MY_DIR = str(Path(tempfile.mkdtemp(prefix="toolkit-tests-")) / "my_toolkit")
# ... and every notebook nbval runs starts from a fresh copy of what chapters 01-07 save (tests/chapters_my_toolkit,
# held to the chapters by the passes that run them filled in, tests/support.py): chapters 06, 07 and 12 read the
# earlier chapters' pieces, so their stored outputs are the same whatever ran before them, in this worker or another
CHAPTERS_MY_TOOLKIT = Path(__file__).resolve().parent / "tests" / "chapters_my_toolkit"
_COPIES: dict[str, str] = {}  # notebook path -> its copy of the chapters' my_toolkit, made once per session


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Point TOOLKIT_MY_DIR at the right folder before nbval starts a notebook's kernel (the kernel inherits
    the environment when its file's first cell is set up); a test's own monkeypatch still wins."""
    path = Path(str(item.fspath))
    if path.suffix != ".ipynb":
        os.environ["TOOLKIT_MY_DIR"] = _SESSION_MY_DIR
        return
    if str(path) not in _COPIES:
        copy = Path(tempfile.mkdtemp(prefix="toolkit-notebook-")) / "my_toolkit"
        shutil.copytree(CHAPTERS_MY_TOOLKIT, copy, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
        _COPIES[str(path)] = str(copy)
    os.environ["TOOLKIT_MY_DIR"] = _COPIES[str(path)]


# How the suite is spread over the workers (pyproject.toml: -n auto --dist loadgroup). Every test goes on its own to
# whichever worker is free, except a notebook's cells, which run in order in one kernel, and the modules whose
# module-scoped fixtures start something big (JupyterLab, a venv with the toolkit installed, an MCP server, a
# user): each of those is one unit. The units that take longest start first, so no worker is left with one of
# them while the other has nothing to do; then the notebooks; then the rest in the order they were collected.
# (pytest-xdist's own loadgroup renames node ids to group them, which pytest 9 no longer lets it do: the units
# are drawn here, by path, in a scheduler of our own.)
KEEP_TOGETHER = {"test_browser.py", "test_install.py", "test_capstone.py", "test_mcp.py", "test_ordinary_user.py"}
LONG_FIRST = {"test_check_nbgrader.py", "test_browser.py", "test_fuzz.py", "test_fuzz_hostile.py",
              "test_linear_time.py", "test_chapters_other_model.py", "test_check_trust.py", "test_typing.py"}


def _unit(nodeid: str) -> str:
    """The unit a test belongs to: its file for a notebook or a KEEP_TOGETHER module, else the test itself."""
    path = nodeid.split("::", 1)[0]
    return path if path.endswith(".ipynb") or path.rsplit("/", 1)[-1] in KEEP_TOGETHER else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    return Units(config, log)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = Path(str(item.fspath))
        return 0 if path.name in LONG_FIRST or item.get_closest_marker("slow") else 1 if path.suffix == ".ipynb" else 2

    items.sort(key=rank)  # stable: a notebook's cells, and each module's tests, keep their order


def pytest_collection_finish(session):
    """Everything imported and collected so far lives for the whole session: move it out of the garbage
    collector's sight (gc.freeze), so each full collection in a test does not walk the half million objects of
    the imported libraries again (measured on the fuzzing, hardening, audit and bench files in one process: 12 s
    in the collector without, 4-5 s with)."""
    gc.freeze()


# Exercise notebooks are stored unexecuted and fail their checks by design (their stubs raise
# NotImplementedError), so nbval does not run them: tests/test_check.py checks them instead (each
# untouched exercise fails every check and is exactly what `python -m toolkit.check.build` makes from its
# solution). This lives here, not in exercises/, so the students' folder holds only their notebooks.
collect_ignore_glob = ["exercises/*.ipynb"]
