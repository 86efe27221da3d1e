"""A trial class on this machine: the Hub of jupyterhub_config.py, on temporary paths and ports, with throw-away accounts.

    sudo /opt/tool-result-lab/bin/python /srv/tool-result-lab/classroom/trial.py --students 3

starts a second JupyterHub from this folder's config beside any running one (its own ports, database, exchange
and groups), creates the accounts (a teacher and N students), starts their servers through the Hub's REST API,
runs chapter 00 and a `check(fn)` in a kernel of each, and prints how long each server took to start and how much
memory each student holds (PSS: the server, its kernel and the checker's processes). Then it stops everything and
removes the accounts. It needs root, useradd and the proxy (configurable-http-proxy); run it before the first
class, and after changing the server. tests/test_hub.py and the bench's class row drive the same code.

Paths: TRL_COURSE (the course, default /srv/tool-result-lab) and TRL_ENV (its Python environment, default
/opt/tool-result-lab), as in jupyterhub_config.py.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "jupyterhub_config.py"
COURSE_ID = "tool-result-lab"  # classroom/jupyter/student/nbgrader_config.py
PROXY = "configurable-http-proxy"


def find_proxy(*courses: Path) -> str | None:
    """configurable-http-proxy: the pinned one `npm ci` put in a course's classroom/node_modules, else on PATH."""
    for course in courses:
        local = course / "classroom" / "node_modules" / ".bin" / PROXY
        if local.exists():
            return str(local)
    return shutil.which(PROXY)


def cannot_run() -> str:
    """Why a trial class cannot run on this machine ("" when it can)."""
    if not sys.platform.startswith("linux"):
        return "a trial class needs Linux"
    if os.geteuid() != 0:
        return "a trial class needs root: the Hub starts each server as its account"
    for command in ("useradd", "userdel", "groupadd", "groupdel", "chpasswd"):
        if not shutil.which(command):
            return f"a trial class needs {command}"
    return ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- accounts -------------------------------------------------------------------------------------------------

@dataclass
class Accounts:
    """Throw-away OS accounts in throw-away groups: a teacher and students, as the class's config expects them."""

    students: int
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    made: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)

    @property
    def teacher(self) -> str:
        return f"trl{self.tag}t"

    @property
    def student_names(self) -> list[str]:
        return [f"trl{self.tag}s{n}" for n in range(1, self.students + 1)]

    @property
    def students_group(self) -> str:
        return f"trl{self.tag}-students"

    @property
    def teachers_group(self) -> str:
        return f"trl{self.tag}-teachers"

    def create(self) -> None:
        for group in (self.students_group, self.teachers_group):
            subprocess.run(["groupadd", group], check=True, capture_output=True)
            self.groups.append(group)
        for name, group in [(self.teacher, self.teachers_group)] + [(s, self.students_group) for s in self.student_names]:
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", "--groups", group, name], check=True,
                           capture_output=True)
            self.made.append(name)

    def set_password(self, name: str, password: str) -> None:
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True, capture_output=True)

    def uid(self, name: str) -> int:
        return pwd.getpwnam(name).pw_uid

    def remove(self) -> list[str]:
        """End every process of the accounts, remove them with their homes, then the groups. Returns the
        processes that were still running (none, when the Hub stopped its servers as it should)."""
        left = []
        for name in self.made:
            try:
                uid = self.uid(name)
            except KeyError:
                continue
            for pid in processes_of(uid):
                left.append(f"{name}: {command_line(pid)}")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(processes_of(self.uid(n)) for n in self.made) and time.monotonic() < deadline:
            time.sleep(0.1)
        for name in self.made:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for group in self.groups:
            subprocess.run(["groupdel", group], capture_output=True)
        self.made, self.groups = [], []
        return left


def process_table() -> dict[int, tuple[int, int]]:
    """Every running process: pid -> (parent pid, real uid). Zombies are left out: they have ended and wait only
    for a parent to read their exit status (under load, one whose parent the Hub killed can wait for a while)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields["State"].split()[0] == "Z":
            continue
        table[int(entry.name)] = (int(fields["PPid"]), int(fields["Uid"].split()[0]))
    return table


def processes_of(uid: int) -> list[int]:
    """The pids whose real uid is `uid`."""
    return [pid for pid, (_, owner) in process_table().items() if owner == uid]


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


def pss(pids: list[int]) -> int:
    """Bytes of proportional set size (shared pages split among the processes sharing them) of these processes."""
    total = 0
    for pid in pids:
        try:
            rollup = (Path("/proc") / str(pid) / "smaps_rollup").read_text()
        except OSError:  # ended meanwhile
            continue
        total += next(int(l.split()[1]) * 1024 for l in rollup.splitlines() if l.startswith("Pss:"))
    return total


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds these processes used so far, with their ended children's that they waited for."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(n) for n in fields[11:15]) / tick
    return total


# --- the Hub --------------------------------------------------------------------------------------------------

class HubError(RuntimeError):
    """The Hub or a server did not do what was asked; the message ends with the Hub's log."""


class Hub:
    """A JupyterHub started from jupyterhub_config.py with temporary state, exchange and ports, and a service
    token with the admin's scopes for driving it through the REST API."""

    def __init__(self, env: Path, course: Path, scratch: Path, accounts: Accounts, proxy: str) -> None:
        self.env, self.course, self.scratch, self.accounts, self.proxy = env, course, scratch, accounts, proxy
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(24)
        self.exchange = scratch / "exchange"
        self.log = scratch / "jupyterhub.log"
        self.process: subprocess.Popen | None = None

    def config_text(self) -> str:
        service = {"name": "trial", "api_token": self.token}
        role = {"name": "trial", "services": ["trial"],
                "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users",
                           "tokens"]}
        return (f"# the class's config, then only what a trial changes: its ports, its proxy, a service to drive it\n"
                f"c = get_config()\nload_subconfig({str(self.course / 'classroom' / 'jupyterhub_config.py')!r})\n"
                f"c.JupyterHub.bind_url = {self.url!r}\n"
                f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{self.hub_port}'\n"
                f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{self.api_port}'\n"
                f"c.ConfigurableHTTPProxy.command = [{self.proxy!r}]\n"
                f"c.JupyterHub.services.append({service!r})\nc.JupyterHub.load_roles.append({role!r})\n")

    def environment(self) -> dict[str, str]:
        return {"PATH": f"{self.env / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "HOME": os.environ.get("HOME", "/root"), "TRL_COURSE": str(self.course), "TRL_ENV": str(self.env),
                "TRL_STATE": str(self.scratch / "state"), "TRL_EXCHANGE": str(self.exchange),
                "TRL_STUDENTS_GROUP": self.accounts.students_group, "TRL_TEACHERS_GROUP": self.accounts.teachers_group}

    def start(self, timeout: float = 90) -> None:
        config = self.scratch / "jupyterhub_config.py"
        config.write_text(self.config_text(), encoding="utf-8")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([str(self.env / "bin" / "jupyterhub"), "-f", str(config)],
                                            cwd=self.scratch, env=self.environment(), stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self.error(f"the Hub exited with {self.process.returncode} while starting")
            with contextlib.suppress(OSError, HubError):
                if self.api("GET", "/hub/api/")[0] == 200:
                    return
            time.sleep(0.3)
        raise self.error(f"the Hub did not answer within {timeout:.0f} s")

    def error(self, what: str) -> HubError:
        tail = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else "(no log)"
        return HubError(f"{what}\n--- the Hub's log ---\n{tail}")

    def request(self, method: str, path: str, body: Any = None, *, form: dict | None = None,
                timeout: float = 60) -> tuple[int, Any]:
        """(status, JSON or text) of a request through the Hub's proxy, with the trial's token."""
        return self.request_as(self.token, method, path, body, form=form, timeout=timeout)

    def request_as(self, token: str, method: str, path: str, body: Any = None, *, form: dict | None = None,
                   timeout: float = 60) -> tuple[int, Any]:
        """request() with another token (a user's own)."""
        data, headers = None, {"Authorization": f"token {token}"}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        text = raw.decode("utf-8", errors="replace")
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def login(self, name: str, password: str) -> bool:
        """Whether the Hub's log-in form takes this name and password (as a browser sends them)."""
        import http.cookiejar

        class Stay(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any) -> None:
                return None

        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), Stay)
        with browser.open(self.url + "/hub/login", timeout=60) as page:
            xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.read().decode()).group(1)
        fields = urllib.parse.urlencode({"username": name, "password": password, "_xsrf": xsrf}).encode()
        try:
            with browser.open(self.url + "/hub/login", data=fields, timeout=60) as answer:
                return False if answer.status == 200 else answer.status < 400  # 200: the form again, with an error
        except urllib.error.HTTPError as exc:
            return exc.code in (301, 302, 303)

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.request(method, path, body)

    def add_user(self, name: str) -> None:
        status, answer = self.api("POST", f"/hub/api/users/{name}")
        if status not in (201, 409):
            raise self.error(f"adding {name}: {status} {answer}")

    def start_server(self, name: str) -> None:
        status, answer = self.api("POST", f"/hub/api/users/{name}/server")
        if status not in (201, 202):
            raise self.error(f"starting {name}'s server: {status} {answer}")

    def wait_ready(self, name: str, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, user = self.api("GET", f"/hub/api/users/{name}")
            server = (user or {}).get("servers", {}).get("", {}) if status == 200 else {}
            if server.get("ready"):
                return
            if status == 200 and not server:  # the start failed and the Hub forgot the server
                raise self.error(f"{name}'s server stopped while starting")
            time.sleep(0.2)
        raise self.error(f"{name}'s server was not ready within {timeout:.0f} s")

    def stop_server(self, name: str, timeout: float = 60) -> None:
        status, answer = self.api("DELETE", f"/hub/api/users/{name}/server")
        if status not in (202, 204, 400):  # 400: it was not running
            raise self.error(f"stopping {name}'s server: {status} {answer}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, user = self.api("GET", f"/hub/api/users/{name}")
            if status == 200 and not user.get("servers"):
                return
            time.sleep(0.2)
        raise self.error(f"{name}'s server did not stop within {timeout:.0f} s")

    def processes(self) -> list[int]:
        """The Hub and what it started as root: the proxy and the idle culler (each in a session of its own,
        children of the Hub), not the users' servers."""
        if self.process is None or self.process.poll() is not None:
            return []
        table = process_table()
        found, parents = [], {self.process.pid}
        while parents:
            found += parents
            parents = {pid for pid, (ppid, uid) in table.items() if ppid in parents and uid == os.geteuid()}
        return found

    def stop(self, timeout: float = 30) -> list[str]:
        """SIGTERM to the Hub, which stops the servers and the proxy it started; whatever of its processes is
        left after `timeout` is killed and returned (by command line)."""
        if self.process is None:
            return []
        ours = {pid: command_line(pid) for pid in self.processes()}
        left: list[str] = []
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                left.append(f"the Hub: {command_line(self.process.pid)}")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(command_line(pid) == seen for pid, seen in ours.items()):
            time.sleep(0.1)
        for pid, seen in ours.items():
            if pid != self.process.pid and command_line(pid) == seen:
                left.append(seen)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        return left


# --- a kernel in a user's server -------------------------------------------------------------------------------

@dataclass
class Execution:
    """What one cell did: its status ("ok" or "error"), its outputs in nbformat's shape, and the error's name."""

    status: str
    outputs: list[dict]
    error: str = ""

    def text(self) -> str:
        """The cell's printed text and text results, joined."""
        parts = []
        for out in self.outputs:
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif "data" in out:
                parts.append(out["data"].get("text/plain", ""))
            elif out["output_type"] == "error":
                parts.append(f"{out['ename']}: {out['evalue']}")
        return "".join(parts)


class Kernel:
    """A notebook session in a user's server (the sessions API, as JupyterLab opens a notebook) and its kernel's
    channels over a websocket: cells run as JupyterLab runs them, the kernel's working folder the notebook's."""

    def __init__(self, hub: Hub, user: str, path: str) -> None:
        import websocket  # websocket-client: a dependency of jupyter_server

        self.hub, self.user, self.path = hub, user, path
        status, answer = hub.request("POST", f"/user/{user}/api/sessions",
                                     {"path": path, "type": "notebook", "name": Path(path).name,
                                      "kernel": {"name": "python3"}})
        if status != 201:
            raise hub.error(f"opening {path} for {user}: {status} {answer}")
        self.session, self.kernel_id = answer["id"], answer["kernel"]["id"]
        self.client_session = uuid.uuid4().hex
        url = (hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{self.kernel_id}/channels"
               f"?session_id={self.client_session}")
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {hub.token}"], timeout=120)

    def run(self, code: str, timeout: float = 120) -> Execution:
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.user,
                       "session": self.client_session, "version": "5.3",
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        outputs: list[dict] = []
        reply: dict | None = None
        idle = False
        deadline = time.monotonic() + timeout
        while not (idle and reply is not None):
            if time.monotonic() > deadline:
                raise self.hub.error(f"a cell of {self.path} ran past {timeout:.0f} s for {self.user}")
            self.ws.settimeout(max(deadline - time.monotonic(), 0.1))
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if msg["channel"] == "shell" and kind == "execute_reply":
                reply = content
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
            elif kind == "stream":
                if outputs and outputs[-1]["output_type"] == "stream" and outputs[-1]["name"] == content["name"]:
                    outputs[-1]["text"] += content["text"]
                else:
                    outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("execute_result", "display_data"):
                outputs.append({"output_type": kind, "data": content["data"]})
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]})
        return Execution(reply["status"], outputs, reply.get("ename", ""))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.hub.request("DELETE", f"/user/{self.user}/api/sessions/{self.session}")


# --- the course and its environment from a checkout (the kit's own tests and bench) ------------------------------

SYSTEM_PYTHON = "/usr/bin/python3"  # an interpreter every account can run (root's own may live in /root)
ENV_CACHE = Path("/var/cache/tool-result-lab-ci/class-env")
ENV_INPUTS = ("requirements.txt", "constraints.txt", "classroom/requirements.txt", "classroom/install.sh")


def course_copy(checkout: Path, target: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored), as a clone has them, readable by every account."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=checkout,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = checkout / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
    return target


@contextlib.contextmanager
def class_env(course: Path) -> Iterator[Path]:
    """What install.sh makes of `course` in a venv of Debian's python3, as the image's build does (its RUN line).

    The packages stay between runs, kept under ENV_CACHE by a hash of the requirement files, the installer and the
    interpreter (a first install takes minutes); the toolkit and jupyterlab-setup are installed again from `course`
    whenever their sources changed, as copies. A lock keeps one run at a time in it, for as long as the caller uses
    it."""
    import fcntl

    python = subprocess.run([SYSTEM_PYTHON, "--version"], capture_output=True, text=True, check=True).stdout
    env = ENV_CACHE / _digest(course, ENV_INPUTS, python)[:16]
    stamp, toolkit_stamp = env / "installed", env / "installed-toolkit"
    ENV_CACHE.mkdir(parents=True, exist_ok=True)
    with open(ENV_CACHE.parent / "class-env.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            for old in ENV_CACHE.iterdir():
                shutil.rmtree(old, ignore_errors=True)
            subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(env)], check=True, capture_output=True)
            _installed(["sh", str(course / "classroom" / "install.sh"), str(env / "bin" / "python")], course)
            stamp.write_text("sh classroom/install.sh\n", encoding="utf-8")
        source = _digest(course, ("pyproject.toml", "README.md", "toolkit", "jupyterlab-setup"))
        if not toolkit_stamp.exists() or toolkit_stamp.read_text(encoding="utf-8") != source:
            _installed([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall",
                        str(course), str(course / "jupyterlab-setup")], course)
            toolkit_stamp.write_text(source, encoding="utf-8")
        subprocess.run(["chmod", "-R", "a+rX", str(env)], check=True)
        yield env


def _digest(folder: Path, names: tuple[str, ...], extra: str = "") -> str:
    """sha256 over `extra` and these files and folders of `folder` (paths and contents), build leftovers left out."""
    import hashlib

    digest = hashlib.sha256(extra.encode())
    for name in names:
        path = folder / name
        for file in sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]:
            if not {"build", "__pycache__"} & set(file.parts) and ".egg-info" not in str(file):
                digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _installed(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise HubError(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")


# --- a whole trial ----------------------------------------------------------------------------------------------

def notebook_code(path: Path) -> list[str]:
    """The code cells of a notebook, in order."""
    return [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            for cell in json.loads(path.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "code"]


def up_to_check(path: Path) -> list[str]:
    """A solution notebook's code cells up to and including its first check(...) cell."""
    cells = notebook_code(path)
    last = next(n for n, code in enumerate(cells) if code.strip().startswith("check("))
    return cells[:last + 1]


@contextlib.contextmanager
def trial_class(env: Path, course: Path, students: int, *, proxy: str) -> Iterator[tuple[Hub, Accounts]]:
    """The accounts and a started Hub; on leaving, the Hub stopped and the accounts removed, even after an error.
    Raises HubError at the end when anything the trial started was still running (after ending it)."""
    scratch = Path(tempfile.mkdtemp(prefix="trl-hub-"))
    scratch.chmod(0o755)
    accounts = Accounts(students)
    hub = Hub(env, course, scratch, accounts, proxy)
    left: list[str] = []
    try:
        accounts.create()
        hub.start()
        yield hub, accounts
    finally:
        try:
            left = hub.stop() + accounts.remove()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if left:
        raise HubError("still running after the Hub stopped (now ended): " + "; ".join(left))


def measure(hub: Hub, accounts: Accounts, course: Path) -> list[dict]:
    """Each account's server started through the REST API (one after another), chapter 00 and exercise 01's
    check(fn) run in a kernel each, as a student with a chapter and an exercise open; per account: the start's
    wall and CPU seconds, the CPU seconds of the chapter and the check, and the PSS of all its processes."""
    rows = []
    chapter = notebook_code(course / "notebooks" / "00_overview.ipynb")
    [solution] = (course / "solutions").glob("sol01_*.ipynb")
    checked_cells = up_to_check(solution)
    for name in [accounts.teacher, *accounts.student_names]:
        hub.add_user(name)
        began = time.perf_counter()
        hub.start_server(name)
        hub.wait_ready(name)
        started = time.perf_counter() - began
        cpu = cpu_seconds(processes_of(accounts.uid(name)))
        lesson = Kernel(hub, name, "notebooks/00_overview.ipynb")
        exercise = Kernel(hub, name, f"solutions/{solution.name}")
        try:
            for code in chapter:
                ran = lesson.run(code)
                if ran.status != "ok":
                    raise HubError(f"chapter 00 failed for {name}: {ran.text()[-500:]}")
            for code in checked_cells:
                checked = exercise.run(code)
            if "全部通过" not in checked.text():
                raise HubError(f"check(fn) did not pass for {name}: {checked.text()[-800:]}")
            memory = pss(processes_of(accounts.uid(name)))
            worked = cpu_seconds(processes_of(accounts.uid(name))) - cpu
        finally:
            lesson.close()
            exercise.close()
        rows.append({"user": name, "start_s": started, "start_cpu_s": cpu, "lesson_cpu_s": worked,
                     "pss_bytes": memory})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trial.py", description="试课：在这台服务器上用 jupyterhub_config.py 开一个临时的 Hub，"
                                     "建临时账号，测每个学生的服务器启动时间和内存，然后全部清理。")
    parser.add_argument("--students", type=int, default=3, help="几个学生（另有一位老师），默认 3")
    args = parser.parse_args(argv)
    why = cannot_run()
    course = Path(os.environ.get("TRL_COURSE", "/srv/tool-result-lab"))
    env = Path(os.environ.get("TRL_ENV", "/opt/tool-result-lab"))
    proxy = find_proxy(course)
    if not why and not proxy:
        why = f"找不到 {PROXY}：在 {course / 'classroom'} 里运行 npm ci"
    if not why and not (env / "bin" / "jupyterhub").exists():
        why = f"{env} 里没有 JupyterHub：先运行 sh {course / 'classroom' / 'install.sh'} {env / 'bin' / 'python'}"
    if why:
        print(f"✘ {why}", file=sys.stderr)
        return 2
    with trial_class(env, course, args.students, proxy=proxy) as (hub, accounts):
        rows = measure(hub, accounts, course)
        fixed = pss(hub.processes())
    print(f"Hub、代理和空闲清理服务共占内存 {fixed / 2**20:.0f} MiB")
    for row in rows:
        print(f"{row['user']}：服务器启动 {row['start_s']:.1f} 秒（CPU {row['start_cpu_s']:.1f} 秒），"
              f"运行第 00 章和一次 check 用 CPU {row['lesson_cpu_s']:.1f} 秒，之后占内存 {row['pss_bytes'] / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
