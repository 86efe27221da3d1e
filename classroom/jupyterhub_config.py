# JupyterHub for a Tool Result Lab class on one server: one OS account per student (as The Littlest JupyterHub
# does), their servers started by the Hub as those accounts, hand-in with nbgrader, idle servers stopped.
# The teacher's guide (README.md beside this file) says how to set it up; in short, as root:
#
#     /opt/tool-result-lab/bin/jupyterhub -f /srv/tool-result-lab/classroom/jupyterhub_config.py
#
# Where things are (environment variables, the guide's places by default):
#   TRL_COURSE    the course: a clone of the repository, readable by everyone     /srv/tool-result-lab
#   TRL_ENV       the Python environment classroom/install.sh installed into       /opt/tool-result-lab
#   TRL_STATE     the Hub's database and cookie secret (root only)                 /var/lib/tool-result-lab-hub
#   TRL_EXCHANGE  nbgrader's exchange, where assignments are released and handed in  /srv/nbgrader/exchange
# Who is who: the OS group `students` (TRL_STUDENTS_GROUP) may log in; the group `teachers` (TRL_TEACHERS_GROUP)
# may log in, is the Hub's admin and gets nbgrader's teacher tools (formgrader, creating assignments, the courses).
# Log-in is the account's password (PAM). Each server runs classroom/start-server.sh as its account: the first
# start copies the course into ~/course, where everyone works (a teacher's grading folder is ~/course/grading).
import grp
import os
import pwd
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)

COURSE = Path(os.environ.get("TRL_COURSE", "/srv/tool-result-lab"))
ENV = Path(os.environ.get("TRL_ENV", "/opt/tool-result-lab"))
STATE = Path(os.environ.get("TRL_STATE", "/var/lib/tool-result-lab-hub"))
EXCHANGE = Path(os.environ.get("TRL_EXCHANGE", "/srv/nbgrader/exchange"))
STUDENTS = os.environ.get("TRL_STUDENTS_GROUP", "students")
TEACHERS = os.environ.get("TRL_TEACHERS_GROUP", "teachers")
IDLE_MINUTES = int(os.environ.get("TRL_IDLE_MINUTES", "60"))

# the Hub's own files, and nbgrader's exchange: everyone may write into it, no one may remove another's files
# (the sticky bit); nbgrader keeps hand-ins apart inside it (a student can add to inbound/ but not list it)
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
EXCHANGE.mkdir(parents=True, exist_ok=True)
EXCHANGE.chmod(0o1777)
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
# the proxy at the version the class was tested with (`npm ci` in classroom/), else configurable-http-proxy on PATH
_proxy = COURSE / "classroom" / "node_modules" / ".bin" / "configurable-http-proxy"
if _proxy.exists():
    c.ConfigurableHTTPProxy.command = [str(_proxy)]

# who may log in, and who is the teacher
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {STUDENTS, TEACHERS}
c.PAMAuthenticator.admin_groups = {TEACHERS}

# each user's server: the course's environment, started by start-server.sh as that user
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(COURSE / "classroom" / "start-server.sh")]
c.Spawner.environment = {"PATH": f"{ENV / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                         "TRL_COURSE": str(COURSE), "TRL_EXCHANGE": str(EXCHANGE)}
c.Spawner.notebook_dir = "~/course"
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = 120  # a first start on a busy server (30 students at the bell) takes a while
c.Spawner.start_timeout = 180


def is_teacher(name: str) -> bool:
    """Whether the account `name` is in the teachers' group (as a member, or as its primary group)."""
    try:
        group = grp.getgrnam(TEACHERS)
    except KeyError:
        return False
    try:
        primary = pwd.getpwnam(name).pw_gid
    except KeyError:
        return False
    return name in group.gr_mem or primary == group.gr_gid


def by_role(spawner) -> None:
    """A teacher's server reads classroom/jupyter/teacher, then student: nbgrader's teacher tools; a student's
    reads student only: the assignment list (the folders say how)."""
    roles = ["teacher", "student"] if is_teacher(spawner.user.name) else ["student"]
    spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": os.pathsep.join(
        str(COURSE / "classroom" / "jupyter" / role) for role in roles)}


c.Spawner.pre_spawn_hook = by_role

# idle servers stop after an hour without activity (their files stay; the next log-in starts a new server)
c.JupyterHub.services = [{"name": "idle-culler",
                          "command": [str(ENV / "bin" / "python"), "-m", "jupyterhub_idle_culler",
                                      f"--timeout={IDLE_MINUTES * 60}", "--cull-every=300"]}]
c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"],
                            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
