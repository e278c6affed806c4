"""Agreement statistics for the calibration audit: pure Python and numpy, no Django.

Modules: ``calibration``, ``confidence``, ``human_judge``, ``ppi`` (prediction-powered
inference), ``corrected``, ``score_interval`` (a leaderboard cell's interval from its sums),
``sampling`` and ``report`` (the core of the ``agreement`` command),
built on the generic ``core.stats`` (ratings, agreement coefficients, the item bootstrap).
"""
