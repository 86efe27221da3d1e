"""The README's first command opens chapter 00 with the whole project in JupyterLab's file browser."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


@pytest.mark.skipif(shutil.which("jupyter", path=str(Path(sys.executable).parent)) is None,
                    reason="jupyter is not installed next to this Python")
def test_jupyter_lab_from_the_quick_start_roots_at_the_project_and_opens_chapter_00(tmp_path):
    command = re.search(r"&& (jupyter lab [^\n]*)", README).group(1).split()
    port, token = _free_port(), "quickstart-token"
    env = {**os.environ, "BROWSER": "true", "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    args = [str(Path(sys.executable).parent / "jupyter"), *command[1:], "--ip=127.0.0.1", f"--port={port}",
            f"--ServerApp.token={token}", "--allow-root", "--LabApp.news_url=None"]
    server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        names = {item["name"] for item in _get(f"{base}/api/contents?token={token}")["content"]}
        assert {"notebooks", "exercises", "solutions", "data"} <= names
        for _ in range(40):  # the page the browser is sent to, written once the server is up
            opened = list((tmp_path / "runtime").glob("*open.html"))
            if opened:
                break
            time.sleep(0.25)
        pages = " ".join(p.read_text(encoding="utf-8") for p in opened)
        assert "/lab/tree/notebooks/00_overview.ipynb" in pages
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
