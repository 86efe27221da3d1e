"""`python -m toolkit.agent "问题"`."""
import sys

from .cli import main

sys.exit(main())
