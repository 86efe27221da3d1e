#!/bin/sh
# Every student's server starts here, as the student (the Hub's Spawner.cmd; the image's command on Kubernetes).
# The first start copies the course into ~/course: notebooks, exercises, solutions and data, the student's own
# to change. Later starts leave ~/course as it is. Then the home folder is made private to its owner, and the
# single-user server starts (its arguments are the Hub's).
set -eu
course="${TRL_COURSE:-/srv/tool-result-lab}"
if [ ! -e "$HOME/course" ]; then
  fresh="$HOME/.course-copy.$$"
  mkdir -p "$fresh"
  cp -R "$course/notebooks" "$course/exercises" "$course/solutions" "$course/data" "$course/README.md" "$fresh/"
  mv "$fresh" "$HOME/course"
fi
chmod go-rwx "$HOME"
# the student's own toolkit (toolkit.mine): one my_toolkit/ for the chapters and the exercises, in the course
export TOOLKIT_MY_DIR="$HOME/course/my_toolkit"
exec jupyterhub-singleuser "$@"
