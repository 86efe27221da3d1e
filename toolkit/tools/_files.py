"""Where the example tools may read: the data directory and the path check that keeps them in it.

Every example tool reads only from one directory, `data/input/` in the course
folder (`course_dir()`: the checkout the package sits in, or, for a toolkit
installed with `pip install .`, the nearest folder from the current directory up
that holds data/input/). Setting the
environment variable TOOLKIT_DATA_DIR replaces that directory for the whole
process; a tool's `data_dir=` argument (which `default_registry(data_dir=...)`
binds) replaces it for that tool alone, so a panel or a check can point the
tools at a temporary copy without touching the environment. A path a model asks for is
relative to that directory; "..", absolute paths and symlinks that lead out of
it are refused with a value the caller can hand back to the model, never an
exception.
"""
from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Union



__all__ = ["DATA_DIR_ENV", "LOGICAL_PREFIX", "DataDir", "course_dir", "data_dir", "resolve_input", "find_input",
           "envelope", "error_envelope", "load_json_data"]

DATA_DIR_ENV = "TOOLKIT_DATA_DIR"
LOGICAL_PREFIX = "data/input"  # how paths are shown to the model, whatever the real directory is
MAX_PATH_CHARS = 255

DataDir = Union[str, os.PathLike, None]
"""A tool's data folder: a path, or None for the default (`data_dir()`)."""


def course_dir() -> Path:
    """The course folder, the one that holds data/ (beside notebooks/, exercises/ and solutions/).

    The folder the toolkit package sits in, when it holds data/input/ (a checkout: the README's editable
    install, or the toolkit on sys.path); else the nearest folder, from the current directory up, that holds
    data/input/ (a toolkit installed with `pip install .`, in a course image: a chapter runs in notebooks/,
    the agent's command line in the course folder); else the package's folder, where a tool then answers that
    its file is not there."""
    beside_package = Path(__file__).resolve().parents[2]  # toolkit/tools/_files.py -> the folder holding toolkit/
    if (beside_package / "data" / "input").is_dir():
        return beside_package
    try:
        here = Path.cwd()
    except OSError:  # the current directory was removed
        return beside_package
    return next((folder for folder in (here, *here.parents) if (folder / "data" / "input").is_dir()), beside_package)


def data_dir(folder: DataDir = None) -> Path:
    """The directory the tools read from: `folder` if given, else $TOOLKIT_DATA_DIR if set, else the course
    folder's data/input (`course_dir()`)."""
    if folder is not None and str(folder).strip():
        return Path(folder).expanduser()
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return course_dir() / "data" / "input"


def envelope(data: Any, source: list[str]) -> dict:
    """The success shape every example tool returns (the executor opens it: toolkit.results.unwrap_envelope)."""
    return {"status": "ok", "data": data, "source": source, "error": None}


def error_envelope(code: str, message: str, source: list[str] | None = None, **extra: Any) -> dict:
    """The failure shape: {"status": "error", "data": None, "source", "error": {"code", "message", ...}}."""
    return {"status": "error", "data": None, "source": source or [],
            "error": {"code": code, "message": message, **extra}}


def _refuse(path: object, why: str) -> dict:
    shown = repr(path) if not isinstance(path, str) else f"“{path[:80]}”"
    return error_envelope("PATH_NOT_ALLOWED",
                          f"拒绝读取路径 {shown}：{why}。只能读取 {LOGICAL_PREFIX}/ 目录里的文件，"
                          "请只传文件名（例如 sales.csv）。")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:  # a lone surrogate: no file system name, and no JSON the model API accepts
        return False


def resolve_input(path: object, folder: DataDir = None) -> tuple[Path, str] | dict:
    """Check a requested path: (real path, logical path like "data/input/sales.csv") or a refusal envelope.

    The path is looked up in `data_dir(folder)`.
    Accepted: a relative path inside the data directory, with "/" or "\\" as
    separator; a leading "data/input/" is dropped (the model often repeats
    it). Refused (code PATH_NOT_ALLOWED): anything not a non-empty str, NUL
    characters, absolute or drive paths, any ".." part, and paths that
    resolve (through symlinks) outside the data directory. Whether the file
    exists is not checked here.
    """
    if not isinstance(path, str):
        return _refuse(path, f"路径必须是字符串，收到的是 {type(path).__name__}")
    if not path.strip():
        return _refuse(path, "路径为空")
    if len(path) > MAX_PATH_CHARS or "\x00" in path or not _encodable(path):
        return _refuse(path.encode("utf-8", "replace").decode("utf-8"), "路径过长或含有非法字符")
    text = path.strip().replace("\\", "/")
    if PurePosixPath(text).is_absolute() or PureWindowsPath(path.strip()).anchor:
        return _refuse(path, "不允许绝对路径")
    parts = [p for p in PurePosixPath(text).parts if p != "."]
    if ".." in parts:
        return _refuse(path, "不允许用 “..” 跳出数据目录")
    if parts[:2] == ["data", "input"]:
        parts = parts[2:]
    if not parts:
        return _refuse(path, "没有给出文件名")
    try:  # resolving touches the file system: a symlink loop, an over-long name or an unencodable one
        base = data_dir(folder).resolve()
        target = base.joinpath(*parts).resolve()
        target.stat() if target.exists() else None  # ENAMETOOLONG / ELOOP surface here, not in the caller
    except (OSError, RuntimeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return _refuse(path, f"无法解析这个路径（{type(exc).__name__}）")
    if not target.is_relative_to(base):
        return _refuse(path, "它（经过符号链接）指向数据目录之外")
    return target, "/".join([LOGICAL_PREFIX, *parts])


def find_input(path: object, folder: DataDir = None) -> tuple[Path, str] | dict:
    """resolve_input, plus FILE_NOT_FOUND (an envelope) when the file does not exist."""
    where = resolve_input(path, folder)
    if isinstance(where, dict):
        return where
    real, logical = where
    try:
        exists = real.is_file()
    except (OSError, ValueError):
        exists = False
    if not exists:
        return error_envelope("FILE_NOT_FOUND", f"找不到教学数据文件 {logical}", [logical])
    return where


def load_json_data(name: str, folder: DataDir = None) -> tuple[Any, str] | dict:
    """Read one of the tools' own JSON data files from `data_dir(folder)`: (value, logical path) or an error envelope.

    Missing file -> FILE_NOT_FOUND; unreadable or not JSON -> INVALID_DATA_FILE.
    """
    where = find_input(name, folder)
    if isinstance(where, dict):
        return where
    real, logical = where
    try:
        return json.loads(real.read_text(encoding="utf-8")), logical
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        return error_envelope("INVALID_DATA_FILE", f"教学数据文件 {logical} 无法读取或不是合法 JSON：{type(exc).__name__}",
                              [logical])
