"""pmask: induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).

Subpackages (imported lazily, nothing is loaded here):

- ``pmask.perturb``  the impact engine and its on-disk store
- ``pmask.trees``    dependency/constituency decoders and baselines
- ``pmask.eval``     metrics, reports and heatmaps
- ``pmask.corpora``  CoNLL-U, PTB and plain-text readers and writers
- ``pmask.source``   impacts from a store or from a corpus and a model (``ImpactSource``)
- ``pmask.induce``, ``pmask.sweep``, ``pmask.maps``  the library calls behind parse, sweep, heatmap
- ``pmask.provenance``  the ``<output>.meta.json`` record; ``pmask.options`` every named setting

``pmask.parse(sentences, model=..., decoder=...)`` induces trees in one call (see
:func:`pmask.induce.parse`).
"""

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "parse"]


def __getattr__(name: str) -> Any:
    # ``pmask.parse`` is imported on first use so that ``import pmask`` stays light
    if name == "parse":
        from pmask.induce import parse

        return parse
    raise AttributeError(f"module 'pmask' has no attribute {name!r}")
