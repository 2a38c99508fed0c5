"""The association metrics of the field on word vectors, each with a bootstrap interval.

=======================  ==============================================  =======  ===========
function                 metric                                          neutral  biased side
=======================  ==============================================  =======  ===========
``weatkit.rnd``          relative norm distance (Garg et al. 2018)       0        below
``weatkit.rnsb``         relative negative sentiment bias (Sweeney &     0        above
                         Najafian 2019)
``weatkit.mac``          mean average cosine distance (Manzini et al.    none     —
                         2019)
``weatkit.ect``          embedding coherence test (Dev & Phillips 2019)  1        below
``weatkit.ripa``         relational inner product association            0        above
                         (Ethayarajh, Duvenaud & Hirst 2019)
``weatkit.wefat``        word embedding factual association test         0        above
                         (Caliskan et al. 2017)
``weatkit.sc_weat``      single-category WEAT (Caliskan et al. 2017;     0        above
                         Toney & Caliskan 2021)
``weatkit.direct_bias``  DirectBias_c (Bolukbasi et al. 2016)            0        above
=======================  ==============================================  =======  ===========

One module per metric, named after it: ``weatkit.association.rnd.rnd`` is ``weatkit.rnd``
(the package re-exports nothing, so that ``weatkit.association.rnd`` is always the module).
Each function takes word lists with ``vectors=`` (a
:class:`~weatkit.embeddings.vectors.WordVectors`) or arrays of vectors, options after them by
keyword, and returns a frozen result with ``statistic`` and ``confidence_interval`` (and
``pvalue`` where the metric has one). What they share (inputs, the bootstrap, the result shape)
is :mod:`weatkit.association._common`; the direction of definitional pairs (RIPA, DirectBias)
is :mod:`weatkit.association._pairs`.
"""
