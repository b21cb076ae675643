"""The probe and metric entries (``pmask.common.probe_entries``): every entry is whole and lives beside its
code, and the recipes of docs/architecture.md hold: a new probe is one module of ``perturb/probes/``
registered the way the real ones are, a new metric one entry with its computation (named in the metrics
of the probes that take it); CLI choices and help, validation, defaults, store manifests, decoder pairing
and the real engine follow (issues 32 and 38)."""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from resolved import impact_of

from pmask.common import options
from pmask.common.errors import OptionError, SettingError
from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES, MetricEntry
from pmask.perturb.models.load import load_model
from pmask.perturb.probes import probe_matrices, sequences_per_sentence

from authors_reference import reference
from entry_checks import probe_is_whole, runner_misfits
from naive_probes import Naive

WORDS = [["She", "walked", "home", "."], ["He", "said", "the", "decision", "was", "unbelievable", "."]]
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def bert(tiny_bert_dir):
    return load_model(tiny_bert_dir, device="cpu", dtype="float64")


# ---------------------------------------------------------------------------- the entries as they are
# (every entry's contract, whole and beside its code: tests/entry_checks.py, run by tests/common/test_registry.py)

def test_every_metric_has_the_computation_its_probes_run():
    for probe, computation in (("pair", "compare"), ("single", "compare"), ("distance", "between_words")):
        for metric in PROBE_ENTRIES[probe].metrics:
            assert callable(getattr(METRIC_ENTRIES[metric], computation)), (probe, metric)
    with pytest.raises(OptionError, match=r"^metric weight compares no masked values \(the masking probes' metrics: "
                                          r"dist, prob, cos, cpmi\)$"):
        METRIC_ENTRIES["weight"].comparison()
    with pytest.raises(OptionError, match="^metric dist measures no two words of one pass"):
        METRIC_ENTRIES["dist"].measure()


def test_cpmi_s_job_lives_beside_its_comparison():
    assert METRIC_ENTRIES["cpmi"].job.__module__ == METRIC_ENTRIES["cpmi"].compare.__module__ == \
        "pmask.perturb.probes.cpmi"


def test_the_runner_protocol_check_sees_what_it_must():
    """One runner signature (:class:`ProbeRunner`), written down as a type: mypy checks it where each
    entry is made (``ProbeEntry.runner: ProbeRunner``); ``entry_checks.runner_misfits`` checks the functions
    themselves (every registered probe's, in the contract test)."""
    _misfits = runner_misfits

    def no_subword(model, sentences, *, layers, metric, tokenize, **kwargs): ...

    def positional_layers(model, sentences, layers, *, metric, subword, tokenize, **kwargs): ...

    def no_kwargs(model, sentences, *, layers, metric, subword, tokenize): ...

    def needs_more(model, sentences, *, layers, metric, subword, tokenize, window, **kwargs): ...

    assert _misfits(no_subword) == ["subword (keyword-only)"]
    assert _misfits(positional_layers) == ["layers (keyword-only)"]
    assert _misfits(no_kwargs) == ["**kwargs"]
    assert _misfits(needs_more) == ["window (not in the protocol, no default)"]


def test_the_option_tables_are_views_of_the_entries_in_their_order():
    assert list(options.PROBES) == list(PROBE_ENTRIES) and list(options.METRICS) == list(METRIC_ENTRIES)
    assert dict(options.PROBE_METRICS) == {n: e.metrics for n, e in PROBE_ENTRIES.items()}
    assert dict(options.PROBE_SUBWORDS) == {n: e.subwords or tuple(options.SUBWORD_POLICIES)
                                            for n, e in PROBE_ENTRIES.items()}
    assert dict(options.METRIC_SUBWORDS) == {n: e.subword for n, e in METRIC_ENTRIES.items() if e.subword}
    assert tuple(options.ATTENTION_HEAD_METRICS) == tuple((n, m) for n, e in PROBE_ENTRIES.items()
                                                          for m in e.attention_head_metrics)
    assert tuple(options.DISTANCE_PROBES) == tuple(n for n, e in PROBE_ENTRIES.items() if e.distance)
    assert tuple(options.SPAN_PROBES) == tuple(n for n, e in PROBE_ENTRIES.items() if e.spans)


def test_importing_pmask_registers_everything_without_torch():
    code = ("import sys; from pmask.common.options import PROBES, METRICS; "
            "print(len(PROBES), len(METRICS), 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(len(PROBE_ENTRIES)), str(len(METRIC_ENTRIES)), "False"]


# ---------------------------------------------------------------------------- a new probe: one module

#: What ``perturb/probes/transposed.py`` would hold: the probe's code, its cost and its entry, registered on import.
PROBE_MODULE = '''
    """Probe ``transposed``: the pair probe read the other way, F[i][j] = pair's F[j][i]."""
    from __future__ import annotations

    from typing import Any, Iterable, Iterator, Sequence

    import numpy as np

    from pmask.common.probe_entries import PROBE_ENTRIES, ProbeEntry


    def transposed_matrices(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                            subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
        from pmask.perturb.engine.runner import impact_matrices

        for F in impact_matrices(model, sentences, layers, metric=metric, subword=subword, tokenize=tokenize,
                                 **kwargs):
            yield None if F is None else np.ascontiguousarray(F.swapaxes(-1, -2))


    def sequences(n: int) -> int:
        return 1 + n + n * (n - 1) // 2


    PROBE = PROBE_ENTRIES.register(ProbeEntry(
        "transposed", "transposed masking: F[i][j] = d(H(x without j)_j, H(x without i, j)_j); 1 + n + n(n-1)/2 "
                      "sequences", metrics=("cos", "dist"), subwords=("avg", "first"), runner=transposed_matrices,
        sequences=sequences))
'''


@pytest.fixture
def transposed(tmp_path, monkeypatch):
    """The probe module imported as ``perturb/probes/__init__.py`` imports each probe module; whatever it
    registers is gone afterwards."""
    name = "pmask_transposed_probe"   # written here, in tmp_path: no dependency of the tests
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PROBE_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with PROBE_ENTRIES.registered(), METRIC_ENTRIES.registered():
        probe = importlib.import_module(name).PROBE
        probe_is_whole(probe)   # its kind's contract (its module is a test's, not one of PROBE_MODULES)
        assert runner_misfits(probe.runner) == []
        yield probe
    sys.modules.pop(name, None)


def _choices(command: str, flag: str) -> tuple[list[str], str]:
    from pmask.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if flag in a.option_strings)
    return list(action.choices or []), str(action.help)


def test_a_new_probe_reaches_the_cli_validation_manifests_and_decoders(transposed):
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.store.store_settings import StoreSettings
    from pmask.pipeline.checks import check_pairing

    for command in ("impact", "parse", "heatmap", "sweep", "bench"):
        probes, probe_help = _choices(command, "--probe")   # sweep and bench take a list: no choices to show
        assert probes[-1:] in ([], ["transposed"]) and "transposed = transposed masking" in probe_help
        assert "transposed: cos, dist" in _choices(command, "--metric")[1]
    assert options.split_probes("pair,transposed") == ["pair", "transposed"]
    assert impact_of("transposed").metric == "cos"   # the probe's first metric, chosen by the resolver
    options.check_probe("transposed", "dist", "first")
    with pytest.raises(SettingError, match="probe transposed takes metric cos or dist, not prob"):
        options.check_probe("transposed", "prob", "avg")
    with pytest.raises(SettingError, match="takes subword avg or first, not max"):
        options.check_probe("transposed", "cos", "max")
    definitions = StoreSettings("m", ImpactSettings("cos", "avg", "words", "transposed", 0)).manifest_fields()
    assert definitions["definitions"]["probe"].startswith("transposed masking")
    check_pairing("transposed", "eisner")
    with pytest.raises(SettingError, match="cky reads span charts"):
        check_pairing("transposed", "cky")
    assert sequences_per_sentence("transposed", 4) == 11


def test_a_new_probe_runs_through_its_runner_and_the_impact_command(transposed, bert, tiny_bert_dir, tmp_path):
    from pmask.cli import main
    from pmask.perturb.store import ImpactStore

    got = list(probe_matrices(bert, WORDS, impact_of("transposed", metric="dist"), layers=[1, -1]))
    for F, words in zip(got, WORDS):
        want = reference(bert, words, [1, -1], "dist", "avg").swapaxes(-1, -2)
        np.testing.assert_allclose(F, want, rtol=RTOL, atol=ATOL)
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(" ".join(w) + "\n" for w in WORDS), encoding="utf-8")
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--probe", "transposed", "--metric", "dist",
                 "--layers", "2", "-q", "-o", str(tmp_path / "st")]) == 0
    store = ImpactStore.open(tmp_path / "st")
    assert store.settings.impact.probe == "transposed"
    for k, words in enumerate(WORDS):
        want = reference(bert, words, [2], "dist", "avg", include_cls=True)[0].T
        np.testing.assert_allclose(store[k].layer(2, cls=True), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------- a new metric: one entry with its code

def _half_euclidean(base: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(base - current, dim=-1) / 2


def _chebyshev(vectors: torch.Tensor) -> torch.Tensor:
    return torch.cdist(vectors, vectors, p=float("inf"))


#: Two new metrics, each its entry with its computation, and the probes that name them.
HALF = MetricEntry("halfdist", "half the Euclidean distance of dist", compare=_half_euclidean)
CHEBYSHEV = MetricEntry("linf", "L-infinity distance between the hidden states of words i and j",
                        between_words=_chebyshev)


@pytest.fixture
def new_metrics():
    pair, distance = PROBE_ENTRIES["pair"], PROBE_ENTRIES["distance"]
    with METRIC_ENTRIES.registered(HALF, CHEBYSHEV), PROBE_ENTRIES.registered(
            dataclasses.replace(pair, metrics=(*pair.metrics, "halfdist")),
            dataclasses.replace(distance, metrics=(*distance.metrics, "linf"))):
        yield


def test_a_new_metric_reaches_the_cli_and_validation(new_metrics):
    metrics, metric_help = _choices("parse", "--metric")
    assert metrics[-2:] == ["halfdist", "linf"] and "pair: dist, cos, prob, cpmi, halfdist" in metric_help
    assert list(options.PROBES) == list(PROBE_ENTRIES) and list(PROBE_ENTRIES)[0] == "pair"   # stood in, in place
    options.check_probe("pair", "halfdist", "max")
    with pytest.raises(SettingError, match="probe single takes metric dist or cos or prob, not halfdist"):
        options.check_probe("single", "halfdist", "avg")
    assert options.split_metrics("halfdist, linf") == ["halfdist", "linf"]


def test_a_new_metric_is_computed_by_the_real_engine(new_metrics, bert):
    for F, words in zip(probe_matrices(bert, WORDS, impact_of("pair", metric="halfdist"), layers=[1, 2]), WORDS):
        np.testing.assert_allclose(F, reference(bert, words, [1, 2], "dist", "avg") / 2, rtol=RTOL, atol=ATOL)
    for F, words in zip(probe_matrices(bert, WORDS, impact_of("distance", metric="linf"), layers=[1, 2]), WORDS):
        hidden = Naive(bert, words).run()[0]
        for a, layer in enumerate([1, 2]):
            v = np.stack([hidden[layer, p].mean(0).numpy() for p in Naive(bert, words).pieces])
            np.testing.assert_allclose(F[a], np.abs(v[:, None] - v[None]).max(-1), rtol=RTOL, atol=ATOL)


def test_a_new_metric_of_a_probe_other_than_pair_is_computed_by_its_entry_alone(bert):
    """The recipe for any probe: one entry with its computation, named in the metrics of probe single alone
    (the engine refused it before: "unknown metric 'halfdist' (choose from dist, cos, prob, cpmi)", pair's)."""
    single = PROBE_ENTRIES["single"]
    with METRIC_ENTRIES.registered(HALF), PROBE_ENTRIES.registered(
            dataclasses.replace(single, metrics=(*single.metrics, "halfdist"))):
        halves = list(probe_matrices(bert, WORDS, impact_of("single", metric="halfdist"), layers=[1, 2]))
        with pytest.raises(SettingError, match="probe pair takes metric .* not halfdist"):
            options.check_probe("pair", "halfdist", "avg")
    for F, words in zip(halves, WORDS):   # single's dist by one naive forward per input, halved
        np.testing.assert_allclose(F, Naive(bert, words).single("dist", [1, 2]) / 2, rtol=RTOL, atol=ATOL)


def test_a_metric_without_its_probe_s_computation_is_refused_in_one_line(bert):
    distance = PROBE_ENTRIES["distance"]
    with METRIC_ENTRIES.registered(HALF), PROBE_ENTRIES.registered(
            dataclasses.replace(distance, metrics=(*distance.metrics, "halfdist"))), \
            pytest.raises(OptionError, match="^metric halfdist measures no two words of one pass"):
        probe_matrices(bert, WORDS, impact_of("distance", metric="halfdist"), layers=[1])
