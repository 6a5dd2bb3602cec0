"""The site's figures and the tables that go with them, one module per page or section of the
article: for each figure its data (tidy DataFrames computed from the model), its drawing (one
Plotly figure) and its :class:`~sitebuild.figures.spec.FigureSpec` (id, caption, published
table, simulator link), side by side; each module lists its figures in ``FIGURES``, which
:mod:`sitebuild.build` writes.

* ``acceptance``: Algorithm 1, tokens per iteration, per-position acceptance, alpha and gamma;
* ``pictures``: one speculative iteration as a timeline and on the card's roofline;
* ``costs``: the arithmetic bill, memory (and its tables), context, draft heads;
* ``timing``: where the time goes, and each user's rate against the server's;
* ``ladders``: the ladder and the break-even map;
* ``schedule``: the best gamma at every load as vLLM's schedule, against one gamma throughout;
* ``cards``: the page "Other cards";
* ``engines``: the engines against real servers (on one GPU) and their tables;
* ``beyond``: the page "Beyond one GPU" and the four-GPU measurements;
* ``validation``: the validation page's held-out measurements (every one no fit has read, and
  the draft model measured up to 128 sequences, also the article's) and the GPU pass timings;
* ``spec``, ``common``, ``placement``: the record of a figure, and what the figures share.

Conventions: the verdict colours of :mod:`sitebuild.theme` (teal a gain against plain decoding,
grey within 3% of even, magenta a loss) mean only that, and no drafter, part, engine or series
takes them (n-gram lookup is gold); a dashed 1.0x line on every speedup axis; hover text with
units; axis ranges pinned so that sliders and menus never rescale them; sliders and menus that
Plotly does not draw, docs/javascripts/figures.js putting one native control for each above the
figure. A drawing function (``draw_*``) never calls the model.
"""
