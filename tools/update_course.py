"""Get the course's updates without a git conflict and without losing a student's work.

    python tools/update_course.py

Running a notebook in JupyterLab rewrites it (outputs, execution counts, widget state), so a plain
`git pull` stops at every notebook the course has changed too. This does what the pull cannot:

* fetches the course, and stops (changing nothing) if there is nothing new;
* a notebook the student changed and the course changed too is merged cell by cell (cells matched by
  id, three-way against the version the student started from): a cell the student edited keeps the
  student's version, every other cell becomes the course's new one; where both changed a cell, the
  student's stays and the course's new version follows it as a Markdown cell to compare. A notebook the
  student only ran comes out exactly as the course's new version;
* any other file changed on both sides becomes the course's version;
* before anything is replaced, the student's copy goes to backups/<time>/ (git-ignored);
* then the branch fast-forwards to the course. Files only the student changed stay as they are.

It stops, changing nothing, where the student has commits of their own (then `git pull` is theirs to
use) or a merge in progress. For students: the messages are Chinese; exit code 0 when up to date.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


class UpdateError(Exception):
    """A situation the student must resolve; the message says how. Nothing has been changed."""


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, encoding="utf-8")
    if check and done.returncode != 0:
        raise UpdateError(f"git {' '.join(args)} 失败：{done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def git_bytes(repo: Path, rev: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True)
    return done.stdout if done.returncode == 0 else None


# --- notebooks, cell by cell ------------------------------------------------------------------------------

def _source(cell: dict) -> tuple[str, str]:
    source = cell.get("source", "")
    return cell.get("cell_type", ""), source if isinstance(source, str) else "".join(source)


def merge_notebook(base: dict, mine: dict, theirs: dict) -> tuple[dict, list[str]]:
    """Three-way merge of a notebook by cell id; returns (merged, ids of cells both sides changed).

    Outputs never decide: a cell counts as changed when its type or source changed."""
    base_cells = {c.get("id"): c for c in base["cells"]}
    mine_cells = {c.get("id"): c for c in mine["cells"]}
    theirs_ids = {c.get("id") for c in theirs["cells"]}
    groups: list[tuple[str, list[dict]]] = []   # (the course's cell id, the cells it becomes)
    both = []
    taken = set(mine_cells) | theirs_ids
    for cell in theirs["cells"]:
        cid = cell.get("id")
        old, own = base_cells.get(cid), mine_cells.get(cid)
        if own is None:
            # new in the course, or changed there after the student deleted it
            groups.append((cid, [cell] if old is None or _source(old) != _source(cell) else []))
        elif _source(own) == _source(cell) or (old is not None and _source(own) == _source(old)):
            groups.append((cid, [cell]))      # the student did not change it: the course's cell, outputs too
        elif old is not None and _source(cell) == _source(old):
            groups.append((cid, [own]))       # only the student changed it
        else:
            both.append(cid)
            note_id = next(i for i in (f"{cid}-course-update-{n}"[-64:] if n else f"{cid}-course-update"[-64:]
                                       for n in range(len(taken) + 1)) if i not in taken)
            taken.add(note_id)
            groups.append((cid, [own, {"cell_type": "markdown", "id": note_id, "metadata": {},
                                       "source": "**课程更新：** 上面这个单元格在课程的新版本里改成了下面这样。你的版本保留在"
                                                 "上面，对照之后自己决定要不要改。\n\n```\n" + _source(cell)[1] + "\n```"}]))
    # cells the student added, and cells the student edited that the course removed: kept, after the course
    # cell that came before them in the student's notebook (or first)
    after: dict[str | None, list[dict]] = {}
    anchor = None
    for cell in mine["cells"]:
        cid = cell.get("id")
        old = base_cells.get(cid)
        if cid in theirs_ids:
            anchor = cid
        elif old is None or _source(old) != _source(cell):
            after.setdefault(anchor, []).append(cell)
    merged = list(after.get(None, []))
    for cid, cells in groups:
        merged += cells + after.get(cid, [])
    return {**theirs, "cells": merged}, both


def _has_cell_ids(*notebooks: dict) -> bool:
    return all(nb.get("cells") is not None and all(c.get("id") for c in nb["cells"]) for nb in notebooks)


def _dump_notebook(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


# --- the update ---------------------------------------------------------------------------------------------

def local_changes(repo: Path) -> set[str]:
    """Paths changed in the working tree or index, and untracked files (git status, porcelain v1)."""
    entries = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all").split("\0")
    paths, skip = set(), False
    for entry in entries:
        if skip:
            skip = False
            continue
        if entry:
            paths.add(entry[3:])
            skip = entry[0] in "RC"  # a rename's original path follows
    return paths


def update(repo: Path, out=print) -> int:
    if git(repo, "rev-parse", "--is-inside-work-tree", check=False).strip() != "true":
        raise UpdateError(f"{repo} 不是 git 仓库：请在用 git clone 下载的课程文件夹里运行。")
    repo = Path(git(repo, "rev-parse", "--show-toplevel").strip())
    for marker in ("MERGE_HEAD", "rebase-merge", "rebase-apply"):
        if (repo / git(repo, "rev-parse", "--git-path", marker).strip()).exists():
            raise UpdateError("上一次的 git 合并还没有结束。不想要它的话先运行 `git merge --abort`（或 `git rebase --abort`），"
                              "再运行本命令。")
    upstream = git(repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False).strip()
    if not upstream:
        raise UpdateError("当前分支没有对应的远程分支，不知道从哪里取课程更新（用 git clone 下载的课程才有）。")
    out(f"正在从 {upstream} 获取课程更新……")
    git(repo, "fetch", "--quiet")
    behind = int(git(repo, "rev-list", "--count", "HEAD..@{u}"))
    ahead = int(git(repo, "rev-list", "--count", "@{u}..HEAD"))
    if behind == 0:
        out("✔ 已经是最新的课程，没有需要更新的内容。")
        return 0
    if ahead:
        raise UpdateError(f"你在本地做过 {ahead} 次 git 提交，本命令不替你合并提交历史（什么都没改）。"
                          "请用 `git pull` 合并，或请老师帮忙。")
    changed_upstream = set(filter(None, git(repo, "diff", "--name-only", "-z", "HEAD", "@{u}").split("\0")))
    touched = sorted(local_changes(repo) & changed_upstream)
    backup = repo / "backups" / time.strftime("%Y%m%d-%H%M%S")
    merged: dict[str, tuple[bytes, list[str]]] = {}
    for path in touched:
        mine_path = repo / path
        if not mine_path.is_file():
            continue                              # deleted here: the course's version comes back
        (backup / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mine_path, backup / path)
        base, theirs = git_bytes(repo, "HEAD", path), git_bytes(repo, "@{u}", path)
        if path.endswith(".ipynb") and base is not None and theirs is not None:
            try:
                notebooks = [json.loads(b) for b in (base, mine_path.read_bytes(), theirs)]
            except ValueError:
                notebooks = []
            if notebooks and _has_cell_ids(*notebooks):
                result, both = merge_notebook(*notebooks)
                merged[path] = (theirs if result == notebooks[2] else _dump_notebook(result), both)
    for path in touched:                          # back to the version the student started from
        if git_bytes(repo, "HEAD", path) is None:  # the student's own file where the course adds one
            git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "--", path)
            (repo / path).unlink(missing_ok=True)
        else:
            git(repo, "checkout", "HEAD", "--", path)
    try:
        git(repo, "merge", "--ff-only", "--quiet", "@{u}")
    except UpdateError:
        for path in touched:                      # put the student's files back as they were
            if (backup / path).exists():
                shutil.copy2(backup / path, repo / path)
        raise
    for path, (content, _) in merged.items():
        (repo / path).write_bytes(content)
    out(f"✔ 课程已更新到 {git(repo, 'rev-parse', '--short', 'HEAD').strip()}（{len(changed_upstream)} 个文件有变化）。")
    for path in touched:
        if path in merged and merged[path][1]:
            out(f"⚠ {path}：保留了你改过的内容；单元格 {', '.join(merged[path][1])} 你和课程都改了，"
                "课程的新版本放在它下面，请对照。")
        elif path in merged and (repo / path).read_bytes() != git_bytes(repo, "HEAD", path):
            out(f"✔ {path}：保留了你改过的单元格，其余部分换成了课程的新版本。")
        else:
            out(f"○ {path}：换成了课程的新版本。")
    if touched:
        out(f"你更新前的这些文件都备份在 {backup.relative_to(repo).as_posix()}/ 里。")
        out("JupyterLab 里开着这些文件的话：关掉标签页再重新打开；如果提示“文件已在磁盘上更改”，选“恢复”（Revert）。")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="获取课程更新：保留你的练习答案，不产生 git 冲突。")
    parser.add_argument("--repo", type=Path, default=CHECKOUT, help="课程文件夹（默认：本脚本所在的课程）")
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):   # a console whose code page lacks ✔ ✘ must not stop the update
        stream.reconfigure(errors="replace")
    try:
        return update(args.repo)
    except UpdateError as error:
        print(f"✘ {error}", file=sys.stderr)
        return 1
    except FileNotFoundError:
        print("✘ 没有找到 git：请先安装 git（https://git-scm.com）。", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
