"""Makes the whole test session hermetic, notebooks included.

nbval's kernels inherit this process's environment, so the settings that pick a
model are removed here, before any kernel starts: every test and notebook talks
to the offline stand-in model, whatever a developer's shell or .env says.
"""
import os
import tempfile
from pathlib import Path

for _name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "MODEL_BASE_URL", "MODEL_NAME", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
os.environ["TOOLKIT_DOTENV"] = "none"  # never read the project's .env during tests
# chapters save the student's pieces (toolkit.mine.save): under test into a throwaway my_toolkit/, so running
# the suite never overwrites a student's own saved work in the project folder
os.environ["TOOLKIT_MY_DIR"] = str(Path(tempfile.mkdtemp(prefix="toolkit-tests-")) / "my_toolkit")

# Exercise notebooks are stored unexecuted and fail their checks by design (their stubs raise
# NotImplementedError), so nbval does not run them: tests/test_check.py checks them instead (each
# untouched exercise fails every check and is exactly what `python -m toolkit.check.build` makes from its
# solution). This lives here, not in exercises/, so the students' folder holds only their notebooks.
collect_ignore_glob = ["exercises/*.ipynb"]
