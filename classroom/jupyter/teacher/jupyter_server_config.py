# The teacher's server: the formgrader and the course list back on (../student/ turns them off for everyone).
c = get_config()  # noqa: F821 (Jupyter's config loader provides it)
c.ServerApp.jpserver_extensions = {"nbgrader.server_extensions.formgrader": True,
                                   "nbgrader.server_extensions.course_list": True}
