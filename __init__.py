"""pmask: induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).

Subpackages (imported lazily, nothing is loaded here):

- ``pmask.perturb``  the impact engine and its on-disk store
- ``pmask.trees``    dependency/constituency decoders and baselines
- ``pmask.eval``     metrics, reports and heatmaps
- ``pmask.corpora``  CoNLL-U, PTB and plain-text readers and writers
"""

__version__ = "0.1.0"
