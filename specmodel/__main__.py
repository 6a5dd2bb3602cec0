import sys

from specmodel.cli import main

sys.exit(main())
