# nbgrader for everyone in the class (the Hub puts this folder on JUPYTER_CONFIG_PATH; a teacher's server reads
# ../teacher/ first, then this): which course, where assignments are released and handed in, and where a fetched
# assignment goes: into ~/course, beside notebooks/ and data/, where the toolkit finds the course's data.
import os

c = get_config()  # noqa: F821 (nbgrader's config loader provides it)
c.CourseDirectory.course_id = "tool-result-lab"  # the id python -m toolkit.check.build --nbgrader writes too
c.Exchange.root = os.environ.get("TRL_EXCHANGE", "/srv/nbgrader/exchange")
c.Exchange.assignment_dir = os.path.expanduser("~/course")
# what a hand-in leaves out: nbgrader's own list, and the checker's example cache (.hypothesis/ in the folder)
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".hypothesis"]
