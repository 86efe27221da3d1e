"""Exercise notebooks are stored unexecuted and fail their checks by design (their stubs raise
NotImplementedError), so pytest does not run them with nbval. tests/test_check.py checks them instead:
each untouched exercise fails every check, and each is exactly what `python -m toolkit.check.build`
makes from its solution. Students run them with `python -m toolkit.check exercises/NN_....ipynb`."""

collect_ignore_glob = ["*.ipynb"]
