"""CI beyond the README's test command: the course where students run it.

    python .ci/platforms.py          # .ci/run runs it after `python -m pytest`, as root

1. An ordinary user, created here and removed at the end, gets the course as a folder of its own and a venv
   from Debian's /usr/bin/python3 (3.11.2; root's own Python may sit in /root, which the user cannot enter),
   runs the README's install (`python -m pip install -r requirements.txt`), then, as that user:
   the smoke set (below); the checker's tests (check(fn) in a notebook, the shell checker, the class report,
   the attacks on it) with the namespaces on, and a check that they are on where the system lets this user
   make them; the same tests with TOOLKIT_CHECK_SANDBOX=off (the fallback: macOS, Windows, a Linux without
   namespaces) and with TOOLKIT_CHECK_START_METHOD=spawn (how workers start on Windows).
2. Every other interpreter tools/refresh_constraints.py finds (python3.12, python3.13: on PATH or pyenv's):
   a fresh venv, the README's install, the smoke set.

The smoke set: chapter 02 under nbval (its check() cells start a referee and workers), an exercise checked
from the shell both ways (untouched: exit 1; the solution: exit 0), the agent's command line. The installs run
side by side (they mostly wait on the network); the tests one after another. Each step prints its time.
Exit 1 when a step failed, 0 when all passed (a machine without root, useradd or /usr/bin/python3 skips part 1
and says so).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from classroom.trial import course_copy  # noqa: E402  (the checkout as a clone has it, one rule for both)

SYSTEM_PYTHON = "/usr/bin/python3"
# pip's cache for the ordinary user, kept between runs on the machine (handed to each new user): a new user would
# otherwise download every wheel again; the install is still the README's, into a fresh venv
USER_PIP_CACHE = Path("/var/cache/tool-result-lab-ci/pip")
RUNUSER = shutil.which("runuser") or "runuser"
# the checker's tests: all of them with the namespaces on (the data-only boundary's attacks too); the fallback's
# (check(fn), the shell checker, the class report, the attacks on them; test_check_trust.py runs its fallback cases
# in every run already); spawn's (how a worker is started, asked and ended)
CHECKER_TESTS = ["tests/test_check.py", "tests/test_check_referee.py", "tests/test_check_class.py",
                 "tests/test_check_trust.py", "tests/test_check_attacks.py", "tests/test_check_boundary.py"]
FALLBACK_TESTS = ["tests/test_check.py", "tests/test_check_class.py", "tests/test_check_attacks.py"]
SPAWN_TESTS = ["tests/test_check.py", "tests/test_check_referee.py", "tests/test_check_class.py"]
QUESTION = "哪个类别销售额最高？总销售额是多少？"
START = time.monotonic()
failures: list[str] = []


def say(text: str) -> None:
    print(f"[{time.monotonic() - START:6.0f} s] {text}", flush=True)


def tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Place:
    """Where one interpreter's run happens: the course folder, its venv, and who runs the commands."""

    def __init__(self, label: str, python: str, course: Path, venv: Path, user: str | None = None) -> None:
        self.label, self.python, self.course, self.venv, self.user = label, python, course, venv, user
        self.env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                    "HOME": os.path.expanduser(f"~{user}") if user else os.environ.get("HOME", "/root"),
                    "TOOLKIT_DOTENV": "none"}
        if user:
            self.env["PIP_CACHE_DIR"] = str(USER_PIP_CACHE)

    def run(self, what: str, args: list[str], *, expect: int = 0, extra: dict | None = None,
            contains: str = "", timeout: float = 1800) -> bool:
        """Run `args` in the course folder (as the user, if any); a failure is recorded with its output's tail."""
        command = [RUNUSER, "-u", self.user, "--", *args] if self.user else args
        began = time.monotonic()
        try:
            done = subprocess.run(command, cwd=self.course, env={**self.env, **(extra or {})}, capture_output=True,
                                  text=True, timeout=timeout)
            code, out = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as exc:
            code, out = -1, f"timed out after {timeout:.0f} s\n{exc.stdout or ''}{exc.stderr or ''}"
        passed = code == expect and contains in out
        say(f"{'ok  ' if passed else 'FAIL'} {self.label}: {what} ({time.monotonic() - began:.0f} s)")
        if not passed:
            failures.append(f"{self.label}: {what}")
            print(f"  exit {code}, expected {expect}" + (f", and {contains!r} in the output" if contains else ""))
            print("  " + "\n  ".join(out.strip().splitlines()[-40:]), flush=True)
        return passed

    def install(self) -> bool:
        """The README's install, in a fresh venv."""
        return (self.run("venv", [self.python, "-m", "venv", str(self.venv)])
                and self.run("pip install -r requirements.txt", [str(self.venv / "bin" / "python"), "-m", "pip",
                                                                   "install", "--quiet", "-r", "requirements.txt"]))

    def smoke(self) -> None:
        python = str(self.venv / "bin" / "python")
        self.run("chapter 02 under nbval", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                            "notebooks/02_smart_truncate.ipynb"])
        self.run("exercise 02 untouched: the checks fail", [python, "-m", "toolkit.check",
                                                           "exercises/ex02_smart_truncate.ipynb"],
                 expect=1, contains="还没有实现")
        self.run("solution 02: every check passes", [python, "-m", "toolkit.check",
                                                     "solutions/sol02_smart_truncate.ipynb"], contains="全部通过")
        self.run("the agent's command line", [python, "-m", "toolkit.agent", QUESTION], contains="9692")


def ordinary_user() -> tuple[str, Path] | None:
    if os.geteuid() != 0 or not shutil.which("useradd") or not os.access(SYSTEM_PYTHON, os.X_OK):
        say("skipped the ordinary user's run: it needs root, useradd and /usr/bin/python3")
        return None
    user = f"trl-ci-{uuid.uuid4().hex[:6]}"
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", user], check=True)
    home = Path(os.path.expanduser(f"~{user}"))
    course_copy(ROOT, home / "course")
    USER_PIP_CACHE.mkdir(parents=True, exist_ok=True)
    for folder in (home / "course", USER_PIP_CACHE):
        subprocess.run(["chown", "-R", f"{user}:{user}", str(folder)], check=True)
    say(f"created the user {user}; the course copied to {home / 'course'}")
    return user, home / "course"


def checker_as_the_user(place: Place) -> None:
    python = str(place.venv / "bin" / "python")
    allowed = subprocess.run([RUNUSER, "-u", place.user, "--", "unshare", "--user", "--map-root-user", "true"],
                             capture_output=True).returncode == 0
    probe = "from toolkit.check import _sandbox; print('sandbox problem:', repr(_sandbox.problem()))"
    place.run("the namespaces are on for this user" if allowed else "no namespaces here: the fallback says why",
              [python, "-c", probe], contains="sandbox problem: ''" if allowed else "sandbox problem: '")
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    place.run("the checker's tests", [*pytest, *CHECKER_TESTS])
    place.run("the checker's tests, TOOLKIT_CHECK_SANDBOX=off", [*pytest, *FALLBACK_TESTS],
              extra={"TOOLKIT_CHECK_SANDBOX": "off"})
    place.run("the checker's tests, TOOLKIT_CHECK_START_METHOD=spawn", [*pytest, *SPAWN_TESTS],
              extra={"TOOLKIT_CHECK_START_METHOD": "spawn"})


def main() -> int:
    say(f"interpreters: {tool('refresh_constraints').find_pythons()}")
    others = [p for p in tool("refresh_constraints").find_pythons()
              if os.path.realpath(p) not in (os.path.realpath(sys.executable), os.path.realpath(SYSTEM_PYTHON))]
    scratch = Path(tempfile.mkdtemp(prefix="trl-platforms-"))
    places: list[Place] = []
    made = ordinary_user()
    try:
        if made:
            user, course = made
            places.append(Place(f"user {user}, {SYSTEM_PYTHON}", SYSTEM_PYTHON, course, course / ".venv", user))
        for python in others:
            version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                     capture_output=True, text=True).stdout.strip()
            places.append(Place(f"Python {version}", python, ROOT, scratch / f"venv-{version}"))
        with ThreadPoolExecutor(max_workers=len(places) or 1) as pool:
            installed = list(pool.map(Place.install, places))
        for place, ok in zip(places, installed):
            if ok:
                place.smoke()
                if place.user:
                    checker_as_the_user(place)
    finally:
        if made:
            subprocess.run(["userdel", "--remove", made[0]], capture_output=True)
            say(f"removed the user {made[0]}")
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        say(f"{len(failures)} failed: " + "; ".join(failures))
        return 1
    say(f"all passed on {len(places)} interpreters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
