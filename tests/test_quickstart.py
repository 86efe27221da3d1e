"""The README's first command opens chapter 00 with the whole project in JupyterLab's file browser, as the
course's JupyterLab (jupyterlab-setup/): zh_CN menus, no news question, the course font served to the page;
and the README's remote / headless address for chapter 00 opens it."""
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


def _fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


@pytest.mark.skipif(shutil.which("jupyter", path=str(Path(sys.executable).parent)) is None,
                    reason="jupyter is not installed next to this Python")
def test_jupyter_lab_from_the_quick_start_roots_at_the_project_and_opens_chapter_00(tmp_path):
    command = re.search(r"&& (jupyter lab [^\n]*)", README).group(1).split()
    port, token = _free_port(), "quickstart-token"
    # a student's first start: no user config, settings or workspaces yet
    env = {**os.environ, "BROWSER": "true", "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    args = [str(Path(sys.executable).parent / "jupyter"), *command[1:], "--ip=127.0.0.1", f"--port={port}",
            f"--IdentityProvider.token={token}", "--allow-root"]
    log = open(tmp_path / "jupyter-lab.log", "w")
    server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
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
        assert not any(name.endswith(".egg-info") for name in names), "pip's build metadata is not course material"
        for _ in range(40):  # the page the browser is sent to, written once the server is up
            opened = list((tmp_path / "runtime").glob("*open.html"))
            if opened:
                break
            time.sleep(0.25)
        pages = " ".join(p.read_text(encoding="utf-8") for p in opened)
        assert "/lab/tree/notebooks/00_overview.ipynb" in pages

        # without a browser (remote, headless) the terminal shows /lab?token=…; the README's address opens 00
        assert f"127.0.0.1:{port}/lab?token=" in (tmp_path / "jupyter-lab.log").read_text(encoding="utf-8")
        remote = re.search(r"`(/lab/tree/notebooks/00_overview\.ipynb)\?token=…`", README).group(1)
        status, page = _fetch(f"{base}{remote}?token={token}")
        assert status == 200 and b"jupyter-config-data" in page
        # the course's JupyterLab: its stylesheet and font served, Chinese menus and no news question by default
        assert b'href="/custom/custom.css"' in page
        status, css = _fetch(f"{base}/custom/custom.css")
        assert status == 200
        font = re.search(r'url\("([^"]+\.woff2)"\)', css.decode()).group(1)
        status, woff2 = _fetch(f"{base}/custom/{font}")
        assert status == 200 and woff2[:4] == b"wOF2"
        language = _get(f"{base}/lab/api/settings/@jupyterlab/translation-extension:plugin?token={token}")
        assert language["schema"]["properties"]["locale"]["default"] == "zh_CN"
        assert "zh_CN" in _get(f"{base}/lab/api/translations/?token={token}")["data"]
        news = _get(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
        assert news["schema"]["properties"]["fetchNews"]["default"] == "false"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
