"""``impacts(lm, sentences, probe, metric=..., tokenize=..., **kwargs)``: a probe's arrays with the settings given
and the rest as the resolver would choose them below the pipeline (subword ``sum`` for cpmi, else ``avg``; no
context), for the tests of the model families (``tests/perturb/encoders/``, ``tests/perturb/probes/test_cpmi_*``)."""
from __future__ import annotations

from typing import Any

from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.probes import probe_matrices

DEFAULT_METRIC = {"pair": "dist", "single": "dist", "distance": "l2", "attention": "weight"}


def impacts(lm: Any, sentences: Any, probe: str = "pair", *, metric: str | None = None, tokenize: str = "words",
            layers: Any = (-1,), **kwargs: Any):
    """``pmask.perturb.probes.probe_matrices`` with ``ImpactSettings(metric, subword, tokenize, probe, 0)``."""
    metric = metric or DEFAULT_METRIC[probe]
    settings = ImpactSettings(metric, "sum" if metric == "cpmi" else "avg", tokenize, probe, 0)
    return probe_matrices(lm, sentences, settings, layers=layers, **kwargs)


# ---------------------------------------------------------------------------- downstream: a tiny causal model

#: A small gold corpus whose words the tiny models' tokenizers split (several pieces for the long ones).
CAUSAL_CONLLU = """# sent_id = c1
# text = The committee approved the plan .
1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_
2\tcommittee\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tapproved\t_\tVERB\t_\t_\t0\troot\t_\t_
4\tthe\t_\tDET\t_\t_\t5\tdet\t_\t_
5\tplan\t_\tNOUN\t_\t_\t3\tobj\t_\t_
6\t.\t_\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = c2
# text = She walked home yesterday .
1\tShe\t_\tPRON\t_\t_\t2\tnsubj\t_\t_
2\twalked\t_\tVERB\t_\t_\t0\troot\t_\t_
3\thome\t_\tADV\t_\t_\t2\tadvmod\t_\t_
4\tyesterday\t_\tADV\t_\t_\t2\tobl\t_\t_
5\t.\t_\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = c3
# text = Nobody came to the long meeting in town .
1\tNobody\t_\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tcame\t_\tVERB\t_\t_\t0\troot\t_\t_
3\tto\t_\tADP\t_\t_\t6\tcase\t_\t_
4\tthe\t_\tDET\t_\t_\t6\tdet\t_\t_
5\tlong\t_\tADJ\t_\t_\t6\tamod\t_\t_
6\tmeeting\t_\tNOUN\t_\t_\t2\tobl\t_\t_
7\tin\t_\tADP\t_\t_\t8\tcase\t_\t_
8\ttown\t_\tNOUN\t_\t_\t6\tnmod\t_\t_
9\t.\t_\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def causal_model(tmp_path_factory: Any, name: str = "gpt2") -> Any:
    """A tiny random causal model folder (``pmask.perturb.testing.llm_zoo``) and a gold corpus beside it; torch on
    one thread (the tiny models run faster so on a loaded machine)."""
    import torch

    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    torch.set_num_threads(1)
    base = tmp_path_factory.mktemp(f"causal-{name}")
    corpus = base / "gold.conllu"
    corpus.write_text(CAUSAL_CONLLU, encoding="utf-8")
    return make_tiny_llm(name, base / name), corpus


def max_spanning_edges(S: Any) -> set[frozenset[int]]:
    """The undirected edges {a, b} (1-based words) of the maximum spanning tree of the symmetric ``S`` (n x n),
    by Kruskal with a union-find, ties broken by (a, b): a reference written for the tests."""
    n = len(S)
    parent = list(range(n))

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    edges = []
    pairs = [(x, y) for x in range(n) for y in range(x + 1, n)]
    for a, b in sorted(pairs, key=lambda e: -float(S[e[0]][e[1]])):
        if root(a) != root(b):
            parent[root(a)] = root(b)
            edges.append(frozenset((a + 1, b + 1)))
    return set(edges)
