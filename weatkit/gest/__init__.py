"""GEST: gender-stereotype scores for language models and machine translation.

Pikuliak et al. (2023), "Women Are Beautiful, Men Are Leaders: Gender Stereotypes in Machine
Translation and Language Modeling", arXiv:2311.18711. :mod:`weatkit.gest.data` reads the dataset
and per-sample inputs, :mod:`weatkit.gest.aggregate` computes the language-model metrics
(masculine rates q_i, q_f, q_m, stereotype rate g_s, feminine ranks, q_fam) and
:mod:`weatkit.gest.mt` the machine-translation metrics (p_i, p_f, p_m, f_s, f_m, p_fam).
"""
