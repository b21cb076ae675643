"""The parse pipeline: from impacts to trees, the glue between the impacts wing and the trees wing.

Holds :mod:`.induce` (``ParseSettings``, the checks of a parse before any model work, and
``parse_sentences``: every sentence's impacts from an impact source decoded into a tree by a
decoder of :mod:`pmask.trees.registry`; what ``pmask parse``, ``pmask.parse``, ``sweep`` and
``bench`` run). It reads impacts through a protocol (``ImpactSourceLike``; in practice
:class:`pmask.perturb.source.ImpactSource`).

May import ``pmask.common``, ``pmask.corpora``, ``pmask.perturb`` and ``pmask.trees``; ``pmask.eval``
and ``pmask.cli`` import it.
"""
