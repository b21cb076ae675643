"""Speed of the impact engine vs the authors' scheme on a bert-base-sized random model (CPU).

    python benchmarks/impact_speed.py --n-sentences 20 --dtype float32
    python benchmarks/impact_speed.py --n-sentences 20 --dtype bfloat16 --compare-float32

Reference scheme (Wu et al. 2020 code, as ``tests/authors_reference.py`` writes it): for every
piece position p of a sentence of L tokens (specials included) one batch of L sequences, sequence q
masking the word of p and the word of q, through the full encoder (all layers), float32.
Engine: ``pmask.perturb.engine.runner.impact_matrices``.

FLOPs (multiply-add = 2 FLOPs), D = hidden size, Dff = feed-forward size, T = padded width:
  full layer, per token:       2·(4·D² + 2·D·Dff) + 4·T·D     (Q,K,V,O projections, FFN, QKᵀ and AV)
  engine top layer (partial):  2·2·D² per token (K, V) + [2·(2·D² + 2·D·Dff) + 4·T·D] per query slot
Embeddings, LayerNorm, softmax and GELU are not counted. Padded positions are counted (they are
computed). The FLOP floor is FLOPs / peak, the peak being the best of a few large torch.matmul
shapes in the same dtype measured right before the run.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

PUD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
# The authors' scheme is written once, in the tests' reference (tests/authors_reference.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def read_words(path: Path, n: int) -> list[list[str]]:
    """First ``n`` sentences' word forms, skipping multiword-token ranges and empty nodes."""
    import conllu

    out = []
    with open(path, encoding="utf-8") as f:
        for tl in conllu.parse_incr(f):
            out.append([t["form"] for t in tl if isinstance(t["id"], int)])
            if len(out) >= n:
                break
    return out


def matmul_peak(dtype: torch.dtype, repeats: int = 5) -> float:
    """Best GFLOP/s of a few large matmuls (square and bert-like shapes)."""
    best = 0.0
    for m, k, n in [(2048, 2048, 2048), (4096, 768, 3072), (4096, 3072, 768), (4096, 768, 768)]:
        a = torch.randn(m, k, dtype=dtype)
        b = torch.randn(k, n, dtype=dtype)
        for _ in range(2):
            a @ b
        t = time.perf_counter()
        for _ in range(repeats):
            a @ b
        best = max(best, 2 * m * k * n * repeats / (time.perf_counter() - t) / 1e9)
    return best


def layer_flops(tokens: int, pairs: int, D: int, Dff: int) -> float:
    return tokens * 2 * (4 * D * D + 2 * D * Dff) + 4 * pairs * D


def engine_flops(stats, n_layers_run: int, D: int, Dff: int) -> float:
    """FLOPs of what the engine computed: ``n_layers_run`` - 1 full layers + the partial top layer."""
    full = layer_flops(stats.padded_tokens, stats.attention_pairs, D, Dff) * (n_layers_run - 1)
    if stats.fast_path:
        top = stats.padded_tokens * 2 * 2 * D * D + stats.query_slots * 2 * (2 * D * D + 2 * D * Dff) \
            + 4 * stats.query_key_pairs * D
    else:
        top = layer_flops(stats.padded_tokens, stats.attention_pairs, D, Dff)
    return full + top


def run_reference(lm, sentences, layer: int) -> tuple[float, int, int, float]:
    """Authors' scheme; returns seconds, sequences, tokens, FLOPs."""
    from pmask.perturb.alignment import align

    from authors_reference import authors_batch, authors_forward

    cfg = lm.model.config
    base = lm.model.base_model
    mask_id = lm.tokenizer.mask_token_id
    seqs = toks = 0
    flops = 0.0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for words in sentences:
            al = align(lm.tokenizer, words)
            ids = torch.tensor(al.input_ids)
            widx = torch.tensor(al.word_index)
            L = len(ids)
            for p in range(L):
                out = authors_forward(base, authors_batch(ids, widx, p, mask_id))
                h = out.hidden_states[layer][:, p]
                (h - h[p:p + 1]).norm(dim=-1)   # q = p is the base: only p's word masked
                seqs += L
                toks += L * L
                flops += layer_flops(L * L, L * L * L, cfg.hidden_size, cfg.intermediate_size) * cfg.num_hidden_layers
    return time.perf_counter() - t0, seqs, toks, flops


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-sentences", type=int, default=20)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--batch-tokens", type=int, default=None, help="engine budget (default: engine default)")
    ap.add_argument("--skip-reference", action="store_true",
                    help="time the reference on --reference-sentences only and extrapolate by FLOPs")
    ap.add_argument("--reference-sentences", type=int, default=3)
    ap.add_argument("--compare-float32", action="store_true",
                    help="also run the engine in float32 and report the largest relative deviation")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layer", type=int, default=-1)
    ap.add_argument("--conllu", type=Path, default=PUD)
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    from pmask.perturb.engine.runner import impact_matrices
    from pmask.perturb.engine.stats import ImpactStats
    from pmask.perturb.models.load import load_model
    from pmask.perturb.testing import make_random_bert_base

    if not args.conllu.exists():
        print(f"corpus not found: {args.conllu}", file=sys.stderr)
        return 1
    sentences = read_words(args.conllu, args.n_sentences)
    tmp = tempfile.mkdtemp(prefix="pmask-bench-")
    make_random_bert_base(tmp, save_weights=False)
    started = time.perf_counter()
    lm = load_model(f"random:{tmp}", device="cpu", dtype=args.dtype)
    load_s = time.perf_counter() - started
    from pmask.perturb.encoders.select import inspect_model

    started = time.perf_counter()   # the load-time checks alone (probe sentence, fast path vs generic, head)
    inspect_model(lm.model, lm.tokenizer, lm.num_layers, lm.name)
    probe_s = time.perf_counter() - started
    cfg = lm.model.config
    D, Dff, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    layer = args.layer if args.layer >= 0 else L + 1 + args.layer

    peak = matmul_peak(lm.dtype)
    stats = ImpactStats()
    results = list(impact_matrices(lm, sentences, layers=[layer], batch_tokens=args.batch_tokens, stats=stats,
                                   metric="dist", subword="avg", tokenize="words"))
    e_time = stats.seconds
    e_flops = engine_flops(stats, layer, D, Dff) if layer > 0 else 0.0

    lm32 = lm if lm.dtype == torch.float32 else load_model(f"random:{tmp}", device="cpu", dtype="float32")
    deviation = None
    if args.compare_float32 and lm.dtype != torch.float32:
        ref32 = list(impact_matrices(lm32, sentences, layers=[layer], metric="dist", subword="avg", tokenize="words"))
        deviation = max(float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(results, ref32))

    n_ref = min(args.reference_sentences, len(sentences)) if args.skip_reference else len(sentences)
    r_time, r_seqs, r_toks, r_flops = run_reference(lm32, sentences[:n_ref], layer)
    estimated = n_ref < len(sentences)
    if estimated:   # extrapolate by the FLOPs the full reference would compute
        from pmask.perturb.alignment import align

        lengths = [len(align(lm.tokenizer, w)) for w in sentences]
        full_flops = sum(layer_flops(n ** 3, n ** 4, D, Dff) * L for n in lengths)
        r_time = r_time * full_flops / r_flops
        r_seqs, r_toks, r_flops = sum(n * n for n in lengths), sum(n ** 3 for n in lengths), full_flops
    # the machine is shared: take the best peak seen before and after the runs
    peak = max(peak, matmul_peak(lm.dtype))
    peak32 = peak if lm.dtype == torch.float32 else matmul_peak(torch.float32)

    words = sum(len(w) for w in sentences)
    print(f"# {len(sentences)} PUD sentences ({words} words), bert-base config, random weights, layer {layer}, "
          f"{args.threads} threads, engine batch_tokens={args.batch_tokens or 'default'}")
    print(f"# matmul peak: {peak:.1f} GFLOP/s ({args.dtype})" + ("" if lm.dtype == torch.float32 else
                                                                 f", {peak32:.1f} GFLOP/s (float32)"))
    hdr = (f"{'scheme':<22}{'sequences':>10}{'tokens':>11}{'TFLOP':>9}{'seconds':>10}{'GFLOP/s':>9}"
           f"{'speed-up':>9}{'x floor':>9}")
    print(hdr)
    print("-" * len(hdr))
    ref_name = "reference fp32" + (" (est.)" if estimated else "")
    print(f"{ref_name:<22}{r_seqs:>10}{r_toks:>11}{r_flops / 1e12:>9.2f}{r_time:>10.1f}{r_flops / r_time / 1e9:>9.1f}"
          f"{1.0:>9.2f}{r_time / (r_flops / peak32 / 1e9):>9.2f}")
    name = f"engine {args.dtype}"
    print(f"{name:<22}{stats.forward_sequences:>10}{stats.padded_tokens:>11}{e_flops / 1e12:>9.2f}{e_time:>10.1f}"
          f"{e_flops / e_time / 1e9:>9.1f}{r_time / e_time:>9.2f}{e_time / (e_flops / peak / 1e9):>9.2f}")
    if estimated:
        print(f"# reference timed on the first {n_ref} sentences and extrapolated by FLOPs")
    if deviation is not None:
        print(f"# largest relative deviation from float32 (max|F-F32| / max|F32| per sentence): {deviation:.3g}")
    print(f"# engine: {stats.tokens} real tokens, {stats.batches} batches, fast path {stats.fast_path}, "
          f"{stats.tokens / e_time:.0f} tokens/s, {len(sentences) / e_time:.2f} sentences/s")
    print(f"# load_model: {load_s:.2f} s, of which the load-time path/head check {probe_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
