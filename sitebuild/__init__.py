"""The article site's build layer: figures and tables, prose numbers, and file output.

``figures`` holds each figure's data (calls the model), drawing (Plotly, no model calls),
caption and tables, one module per page or section; ``numbers`` and ``claims`` compute what
the prose quotes, ``tables`` the model page's reference tables, ``build`` writes files.
"""
