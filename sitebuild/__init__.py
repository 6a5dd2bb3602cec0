"""The article site's build layer: figure data, drawing, prose numbers, and file output.

``figures_data`` computes (calls the model), ``figures`` draws (Plotly, no model calls),
``numbers`` and ``tables`` compute what the prose and pages quote, ``build`` writes files.
"""
