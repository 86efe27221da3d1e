"""`python -m bench [--quick] [--only ROWS] [--out PATH]`: run the benchmarks."""
import sys

from .run import main

sys.exit(main())
