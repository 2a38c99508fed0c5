"""SEAT (May et al., NAACL 2019) in ``weatkit compare``: WEAT over sentence encodings as a method
of its own. The tests are list sets of ``weatkit run`` (:mod:`weatkit.lists.seat`); this package
is their plug-in (:mod:`weatkit.seat.plugin`). Nothing is imported here."""
