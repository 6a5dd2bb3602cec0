"""The cost model: architectures and cards (``specs``), what they imply (``architecture``,
``heads``, ``drafters``), the roofline price of a pass (``roofline``, ``passes``), acceptance
(``acceptance``), the cohort's timing (``cohort``), memory capacity (``memory``), and the
scenario record (``scenario``) that :func:`~specmodel.model.evaluate.evaluate` turns into an
:class:`~specmodel.model.evaluation.Evaluation` under explicit settings (``settings``)."""
