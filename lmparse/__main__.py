"""``python -m lmparse``: the lmparse command line."""
import sys

from lmparse.cli import main

sys.exit(main())
