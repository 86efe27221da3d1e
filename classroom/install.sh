#!/bin/sh
# Install the course into the Python environment of a class server (the Dockerfile's image, or the one server's
# venv): the students' requirements (../requirements.txt) and the server's (requirements.txt here), with the
# toolkit as an installed copy, not the editable checkout requirements.txt asks for on a laptop. The course
# folder (notebooks/, exercises/, data/, ...) is found from where a notebook runs (toolkit.tools.course_dir).
#
#   sh classroom/install.sh /opt/tool-result-lab/bin/python
set -eu
python="$1"
course="$(cd "$(dirname "$0")/.." && pwd)"
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
# requirements.txt without its editable line (-e .) and its constraints line, given below from the course folder
grep -v -e '^-e ' -e '^-c ' "$course/requirements.txt" > "$list"
cd "$course"
"$python" -m pip install --quiet -c constraints.txt -r "$list" . -r classroom/requirements.txt
