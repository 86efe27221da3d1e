"""Refresh constraints.txt, the exact versions every student, CI and maintainer installs.

requirements.txt names what the course needs with lower bounds and points pip at
constraints.txt, which pins every package (direct and transitive) to the set the
test suite last passed with. Thirty students in one class get one environment,
and a new major matplotlib or JupyterLab cannot change a stored notebook output
behind our back.

A package that one supported Python cannot install at the pinned version (soupsieve 4.1.3
needs Python >= 3.11.5; Debian 12's python3 is 3.11.2) gets alternative pins, each with an
environment marker (PEP 508) that says where it applies:

    soupsieve==2.10; python_full_version < "3.11.5"
    soupsieve==4.1.3; python_full_version >= "3.11.5"

pip applies the one whose marker holds. A refresh resolves the requirements on every
interpreter given (by default each of `find_pythons()`), and where they pick different
versions of a package, writes such alternatives, split where the newer release's
Requires-Python begins.

    python tools/refresh_constraints.py          # new pins: latest allowed versions, resolved on each Python
    python tools/refresh_constraints.py --python /usr/bin/python3 --python python3.13   # on these
    python tools/refresh_constraints.py --check  # does this environment match the pins?

After a refresh: re-run `python -m pytest` in a fresh venv (re-execute notebooks
whose outputs changed, see CONTRIBUTING.md) before committing the new file.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from packaging.markers import InvalidMarker, Marker, default_environment
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
HEADER = ("# Exact versions the test suite passed with; requirements.txt applies them (-c constraints.txt).\n"
          "# A package with alternative pins has one line per Python range (a PEP 508 marker after ';').\n"
          "# Regenerate with: python tools/refresh_constraints.py (see CONTRIBUTING.md).\n")
SKIP = {"tool-result-lab", "tool-result-lab-jupyterlab", "pip", "setuptools", "wheel"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*(?:;\s*(.+))?$")
# the interpreters the course is tested on, where a machine has them: the system's python3 (Debian 12: 3.11.2)
# and the newer minor versions, on PATH or installed by pyenv
NEWER = ("3.12", "3.13")


class Pin(NamedTuple):
    name: str            # canonical
    version: str
    marker: Marker | None
    line: int

    def applies(self, environment: dict[str, str]) -> bool:
        return self.marker is None or self.marker.evaluate(environment)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pin_lines(path: Path = CONSTRAINTS) -> list[Pin]:
    """Every pin of a constraints file; ValueError naming the line for one that is not `name==version[; marker]`."""
    pins: list[Pin] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"{path.name}:{number}: expected name==version (optionally '; marker'), got {line!r}")
        try:
            marker = Marker(match[3]) if match[3] else None
        except InvalidMarker as exc:
            raise ValueError(f"{path.name}:{number}: the marker of {line!r} does not parse: {exc}") from None
        pins.append(Pin(canonical(match[1]), match[2], marker, number))
    return pins


def read_pins(path: Path = CONSTRAINTS, environment: dict[str, str] | None = None) -> dict[str, str]:
    """{canonical name: version}: the pins that apply on `environment` (default: this interpreter).

    ValueError naming the lines when two pins of one package apply at once."""
    environment = environment or default_environment()
    pins: dict[str, Pin] = {}
    for pin in read_pin_lines(path):
        if not pin.applies(environment):
            continue
        if pin.name in pins:
            raise ValueError(f"{path.name}:{pins[pin.name].line} and {pin.line}: two pins of {pin.name} apply on "
                             f"Python {environment.get('python_full_version')}")
        pins[pin.name] = pin
    return {name: pin.version for name, pin in pins.items()}


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


def find_pythons() -> list[str]:
    """The interpreters to resolve and test on that this machine has: this one, the system's /usr/bin/python3
    and python3.12 / python3.13 (on PATH, else the newest of each that pyenv installed); each once, each one
    that runs (a pyenv shim for a version that is not selected does not)."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [sys.executable, "/usr/bin/python3"]
    for minor in NEWER:
        installed = sorted(pyenv.glob(f"{minor}.*/bin/python{minor}"), key=lambda p: Version(p.parts[-3]))
        candidates = [shutil.which(f"python{minor}"), *map(str, reversed(installed))]
        found.append(next((c for c in candidates if c and _runs(c, minor)), ""))
    unique: dict[str, str] = {}
    for python in found:
        if python and os.access(python, os.X_OK):
            unique.setdefault(os.path.realpath(python), python)
    return list(unique.values())


def _runs(python: str, minor: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == minor


def resolve(python: str, wanted: Path) -> tuple[str, dict[str, tuple[str, str]]]:
    """(the interpreter's full version, {name: (version, Requires-Python)}) of what pip picks for `wanted` there."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([python, "-m", "venv", tmp], check=True)
        venv_python = str(Path(tmp) / "bin" / "python")
        subprocess.run([venv_python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        report = Path(tmp) / "report.json"
        subprocess.run([venv_python, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "-r",
                        str(wanted), "--report", str(report)], check=True)
        full = subprocess.run([venv_python, "-c", "import platform; print(platform.python_version())"], check=True,
                              capture_output=True, text=True).stdout.strip()
        picked = json.loads(report.read_text(encoding="utf-8"))["install"]
    return full, {item["metadata"]["name"]: (item["metadata"]["version"], item["metadata"].get("requires_python") or "")
                  for item in picked}


def _lower_bound(requires_python: str) -> str | None:
    """The lowest Python a Requires-Python admits ("" or no lower bound: None)."""
    bounds = [spec.version for spec in SpecifierSet(requires_python) if spec.operator in (">=", ">")]
    return max(bounds, key=Version) if bounds else None


def merge(resolved: dict[str, dict[str, tuple[str, str]]]) -> list[str]:
    """The constraints lines for resolutions on several interpreters ({full version: {name: (version,
    Requires-Python)}}): one pin per package that all agree on; where they differ, one line per version, with a
    python_full_version marker split where each newer version's Requires-Python begins. ValueError when that
    split does not put every interpreter on the version it resolved (the difference has another cause)."""
    display: dict[str, str] = {}
    versions: dict[str, dict[str, str]] = {}  # canonical name -> {version: Requires-Python}
    chosen: dict[str, dict[str, str]] = {}    # canonical name -> {python: version}
    for python, dists in resolved.items():
        for name, (version, requires) in dists.items():
            key = canonical(name)
            if key in SKIP:
                continue
            display.setdefault(key, name)
            versions.setdefault(key, {})[version] = requires
            chosen.setdefault(key, {})[python] = version
    lines: list[str] = []
    for key in sorted(versions, key=lambda k: display[k].lower()):
        if len(versions[key]) == 1:
            lines.append(f"{display[key]}=={next(iter(versions[key]))}")
            continue
        newest_first = sorted(versions[key], key=Version, reverse=True)
        bounds = [_lower_bound(versions[key][v]) for v in newest_first[:-1]]
        if None in bounds:
            raise ValueError(f"{display[key]}: {newest_first} were resolved on different Pythons, and "
                             "Requires-Python does not say where each one begins")
        ranges = [f'python_full_version >= "{bounds[0]}"']
        ranges += [f'python_full_version >= "{low}" and python_full_version < "{high}"'
                   for low, high in zip(bounds[1:], bounds)]
        ranges.append(f'python_full_version < "{bounds[-1]}"')
        alternatives = [f"{display[key]}=={version}; {where}" for version, where in zip(newest_first, ranges)]
        for python, version in chosen[key].items():
            applying = [line.split(";")[0].split("==")[1] for line in alternatives
                        if Marker(line.split(";", 1)[1]).evaluate({"python_full_version": python})]
            if applying != [version]:
                raise ValueError(f"{display[key]}: Python {python} resolved {version}, the markers give {applying}")
        lines += sorted(alternatives, key=lambda line: Version(line.split("==")[1].split(";")[0]))
    return lines


def refresh(pythons: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wanted = Path(tmp) / "requirements.in"
        wanted.write_text("\n".join(requirement_lines()) + "\n", encoding="utf-8")  # the old pins left out
        resolved = dict(resolve(python, wanted) for python in pythons)
    lines = merge(resolved)
    CONSTRAINTS.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} pins to {CONSTRAINTS.name}, resolved on Python {', '.join(sorted(resolved))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare this environment with the pins")
    parser.add_argument("--python", action="append", help="an interpreter to resolve on (repeatable; "
                                                          "default: this one, /usr/bin/python3, python3.12, python3.13)")
    args = parser.parse_args(argv)
    if args.check:
        wrong = mismatches(read_pins())
        print("\n".join(wrong) if wrong else "this environment matches constraints.txt")
        return 1 if wrong else 0
    refresh(args.python or find_pythons())
    return 0


if __name__ == "__main__":
    sys.exit(main())
