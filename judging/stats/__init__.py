"""Agreement statistics for the calibration audit: pure Python and numpy, no Django.

Modules: ``ratings`` (data representation), ``agreement`` (point estimates), ``bootstrap``
(item-resampling intervals from per-item sufficient statistics), ``calibration``, ``ppi``
(prediction-powered inference) and ``report`` (the core of the ``agreement`` command).
"""
