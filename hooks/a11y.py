"""MkDocs hook: accessibility fixes to the theme's own markup.

Material's search is a ``role="dialog"`` element without a name, which screen readers
announce as an anonymous dialog (axe-core: aria-dialog-name). The hook names it "Search"
on every page. The build fails if the dialog is not found where expected, so that a new
Material release that changes the markup is noticed (tests/test_accessibility.py checks
the result in the browser).

Scrollable tables and code cells get their keyboard access and name in the browser, where
it is known whether they scroll (docs/javascripts/a11y.js).
"""

from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

SEARCH_DIALOG = re.compile(r'<div class="md-search" data-md-component="search" role="dialog"(?![^>]*aria-label)')
NAMED = '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search"'


def on_post_page(output, page, **kwargs):
    named, count = SEARCH_DIALOG.subn(NAMED, output, count=1)
    if count == 0 and 'data-md-component="search"' in output and NAMED not in output:
        raise PluginError(f"{page.file.src_uri}: hooks/a11y.py did not find Material's search dialog to name it")
    return named
