/* mkdocs-jupyter inserts a MathJax <script> into notebook pages; this site renders math with
 * the local KaTeX instead, so the script it points to is this empty file (no CDN request). */
