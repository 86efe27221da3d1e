"""Refresh constraints.txt, the exact versions every student, CI and maintainer installs.

requirements.txt names what the course needs with lower bounds and points pip at
constraints.txt, which pins every package (direct and transitive) to the set the
test suite last passed with. Thirty students in one class get one environment,
and a new major matplotlib or JupyterLab cannot change a stored notebook output
behind our back.

    python tools/refresh_constraints.py          # new pins: latest allowed versions in a throwaway venv
    python tools/refresh_constraints.py --check  # does this environment match the pins?

After a refresh: re-run `python -m pytest` in a fresh venv (re-execute notebooks
whose outputs changed, see CONTRIBUTING.md) before committing the new file.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import venv
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
HEADER = ("# Exact versions the test suite passed with; requirements.txt applies them (-c constraints.txt).\n"
          "# Regenerate with: python tools/refresh_constraints.py (see CONTRIBUTING.md).\n")
SKIP = {"tool-result-lab", "tool-result-lab-jupyterlab", "pip", "setuptools", "wheel"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path = CONSTRAINTS) -> dict[str, str]:
    """{canonical name: version} from a constraints file; ValueError on a line that is not name==version."""
    pins: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"{path.name}:{number}: expected name==version, got {line!r}")
        pins[canonical(match[1])] = match[2]
    return pins


def mismatches(pins: dict[str, str]) -> list[str]:
    """Installed distributions whose version differs from its pin (unpinned ones are not judged)."""
    out = []
    for dist in metadata.distributions():
        name = canonical(dist.metadata["Name"] or "")
        if name in pins and dist.version != pins[name]:
            out.append(f"{name}: installed {dist.version}, pinned {pins[name]}")
    return sorted(out)


def requirement_lines(name: str = "requirements-ci.txt") -> list[str]:
    """Every requirement in `name` and the files it includes, without -r / -c / -e lines and the project's
    own folders (./jupyterlab-setup): those are installed from the checkout, not pinned."""
    lines: list[str] = []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            lines += requirement_lines(line[3:].strip())
        elif line and not line.startswith(("-", ".")):
            lines.append(line)
    return lines


def refresh() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / "bin" / "python")
        wanted = Path(tmp) / "requirements.in"
        wanted.write_text("\n".join(requirement_lines()) + "\n", encoding="utf-8")  # the old pins left out
        subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "-r", str(wanted)], check=True)
        frozen = subprocess.run([python, "-m", "pip", "freeze"], check=True, capture_output=True, text=True).stdout
    lines = sorted((l for l in frozen.splitlines() if PIN.match(l) and canonical(l.split("==")[0]) not in SKIP),
                   key=str.lower)
    CONSTRAINTS.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} pins to {CONSTRAINTS.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare this environment with the pins")
    args = parser.parse_args(argv)
    if args.check:
        wrong = mismatches(read_pins())
        print("\n".join(wrong) if wrong else "this environment matches constraints.txt")
        return 1 if wrong else 0
    refresh()
    return 0


if __name__ == "__main__":
    sys.exit(main())
