"""Generic agreement statistics: pure Python and numpy, no Django, for any app.

Modules: ``ratings`` (items × raters data), ``agreement`` (point estimates: Krippendorff's
alpha, Fleiss, Gwet, Cohen) and ``bootstrap`` (item-resampling intervals from per-item
sufficient statistics). The judges' audit (``judging.stats``) and the reviewers' quality
(``review.quality``) both build on them.
"""
