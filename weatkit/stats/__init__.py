"""Statistics shared by every measure: the one resampling module, intervals, CA-WEAT
aggregation and rank correlations.

* :mod:`weatkit.stats.resampling` — every bootstrap and permutation plan (seed and sizes only)
* :mod:`weatkit.stats.intervals` — percentile, BCa and Agresti–Coull intervals
* :mod:`weatkit.stats.aggregate` — CA-WEAT median and its order-statistic CI
* :mod:`weatkit.stats.correlation` — Spearman / Kendall correlations with bootstrap CIs
* :mod:`weatkit.stats.sampling` — the seeded, stratified sample of ``--limit N`` items
"""
