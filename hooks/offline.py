"""MkDocs hook: keep notebook pages free of references to other hosts.

mkdocs-jupyter renders notebooks with nbconvert's lab template, which embeds a module
script that would import mermaid.js from a CDN if the notebook held a Mermaid diagram.
Our notebooks hold none and the site must make no request to another host, so the block
is removed from the page. (MathJax's script tag points at an empty local file instead;
see ``custom_mathjax_url`` in mkdocs.yml.)
"""

from __future__ import annotations

import re

MERMAID_LOADER = re.compile(
    r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded", async \(\) => \{\s*'
    r'const diagrams = document\.querySelectorAll\("\.jp-Mermaid.*?</script>',
    re.S,
)


def on_post_page(output, page, **kwargs):
    if page.file.src_uri.endswith(".ipynb"):
        return MERMAID_LOADER.sub("", output)
    return output
