"""Build the site's generated files (figures, tables, numbers, simulator data) from specmodel.

    python build_figures.py            # writes docs/generated/

Thin by design: everything it writes is computed by specmodel (see specmodel/site/).
"""

import sys

from sitebuild.build import main

if __name__ == "__main__":
    sys.exit(main())
