"""Makes the whole test session hermetic, notebooks included.

nbval's kernels inherit this process's environment, so the settings that pick a
model are removed here, before any kernel starts: every test and notebook talks
to the offline stand-in model, whatever a developer's shell or .env says.
"""
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
# checked against the chapters by tests/test_capstone_chapters.py): chapters 06, 07 and 11 read the earlier chapters'
# pieces, so their stored outputs are the same whatever ran before them, in this worker or in another
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


# Exercise notebooks are stored unexecuted and fail their checks by design (their stubs raise
# NotImplementedError), so nbval does not run them: tests/test_check.py checks them instead (each
# untouched exercise fails every check and is exactly what `python -m toolkit.check.build` makes from its
# solution). This lives here, not in exercises/, so the students' folder holds only their notebooks.
collect_ignore_glob = ["exercises/*.ipynb"]
