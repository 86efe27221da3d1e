# nbgrader for the teacher, read before ../student/ (course id, exchange): the grading folder ~/course/grading,
# where `python -m toolkit.check.build --nbgrader grading` (run in ~/course) writes the course, and that course's
# own settings (the checker's autograde step), which the formgrader reads only from here: it is not started there.
import os

c = get_config()  # noqa: F821 (nbgrader's config loader provides it)
c.CourseDirectory.root = os.path.expanduser("~/course/grading")
load_subconfig(os.path.join(c.CourseDirectory.root, "nbgrader_config.py"))  # noqa: F821 (nothing until it is written)
