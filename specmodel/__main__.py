"""``python -m specmodel``: the command line (:mod:`specmodel.cli`)."""

import sys

from specmodel.cli import main

sys.exit(main())
