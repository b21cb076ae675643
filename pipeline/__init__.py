"""The parse pipeline: from impacts to trees, the glue between the impacts wing and the trees wing.

Holds :mod:`.request` (the one request of a run, the one resolution of its defaults, ``resolve``, and
the one gate before any model work, ``check_request``), :mod:`.decoding` (``Decoding``, the settings of
how impacts become trees), :mod:`.checks` (the refusals the gate runs), :mod:`.induce` (``parse_sentences``:
every sentence's impacts from an impact source decoded into a tree by a decoder of
:mod:`pmask.trees.registry`; what ``pmask parse``, ``pmask.parse``, ``sweep`` and ``bench`` run) and
:mod:`.trees_output` (where trees are written). It reads impacts through a protocol (``ImpactSourceLike``; in practice
:class:`pmask.perturb.source.ImpactSource`).

May import ``pmask.common``, ``pmask.corpora``, ``pmask.perturb`` and ``pmask.trees``; ``pmask.eval``
and ``pmask.cli`` import it.
"""
