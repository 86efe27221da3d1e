# A student's server: nbgrader's assignment list (fetch, validate, submit), none of the teacher's tools. The
# formgrader and the course list are server extensions nbgrader turns on for everyone; they are off here
# (../teacher/ turns them on again for the teacher). labconfig/page_config.json hides their JupyterLab side.
c = get_config()  # noqa: F821 (Jupyter's config loader provides it)
c.ServerApp.jpserver_extensions = {"nbgrader.server_extensions.formgrader": False,
                                   "nbgrader.server_extensions.course_list": False}
