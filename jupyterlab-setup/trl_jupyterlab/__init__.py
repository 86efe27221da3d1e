"""The course's JupyterLab: Chinese readable on any machine, a Chinese UI, a quiet first start.

Installed by the course's requirements.txt (`./jupyterlab-setup`, not editable: Jupyter reads server
extensions and settings defaults only from files in the environment, and an editable install copies
none). It puts these files there:

* etc/jupyter/jupyter_server_config.d/trl_jupyterlab.json enables this server extension, which serves
  static/ (custom.css and the course font, a WOFF2 subset of Noto Sans CJK SC made by
  tools/make_font_subset.py) at JupyterLab's /custom/ and turns on `LabApp.custom_css`, so every page
  loads custom.css: the course font is the last fallback of JupyterLab's font stacks, used only where
  no system CJK font is installed (a fresh Linux), and fetched only then.
* share/jupyter/lab/settings/overrides.d/trl_jupyterlab.json changes two settings defaults: the UI
  language zh_CN (jupyterlab-language-pack-zh-CN), and no news question or update check on first start.
  They are defaults: Settings → Language → English switches a user back, and is remembered.
* share/jupyter/labextensions/tool-result-lab-jupyterlab is a small JupyterLab plugin (source and build
  in ../labextension): JupyterLab shows a mermaid diagram as an image, which cannot use the page's fonts;
  where the page uses the course font, the plugin puts that font into each diagram.

Jupyter does not read config files from the current folder, so this cannot live in a project-level
jupyter_server_config.py. `jupyter server extension disable trl_jupyterlab` turns the font off.
"""
from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "trl_jupyterlab"}]


def _link_jupyter_server_extension(serverapp) -> None:
    """Before the web app exists: serve static/ first at /custom/ and make JupyterLab's page load custom.css."""
    serverapp.static_custom_path = [str(STATIC), *serverapp.static_custom_path]
    # JupyterLab links before this extension (the server links extensions in alphabetical order) and reads
    # custom_css only when it loads, after every link; the config covers a LabApp linked later.
    serverapp.config.LabApp.custom_css = True
    for app in serverapp.extension_manager.extension_apps.get("jupyterlab", ()):
        app.custom_css = True


def _load_jupyter_server_extension(serverapp) -> None:
    # pip's build metadata for the editable toolkit sits in the project root: not course material
    manager = serverapp.contents_manager
    manager.hide_globs = [*manager.hide_globs, "*.egg-info"]
    serverapp.log.info("trl_jupyterlab: course font and custom.css served from %s", STATIC)
