"""The cost model: architectures and cards (``specs``), what they imply (``architecture``,
``heads``, ``experts``), drafters and engines that price their own terms (``drafters``,
``engines``), the roofline price of a pass (``roofline``, ``passes``) split over GPUs
(``parallel``, ``layout``), acceptance (``acceptance``), the cohort's and the steady batch's
timing (``cohort``, ``timing``), memory capacity (``memory``), and the
scenario record (``scenario``) that :func:`~specmodel.model.evaluate.evaluate` turns into an
:class:`~specmodel.model.evaluation.Evaluation` under explicit settings (``settings``)."""
