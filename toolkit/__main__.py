"""`python -m toolkit "问题"`: the same command line as `python -m toolkit.agent`."""
import sys

from .agent import main

sys.exit(main())
