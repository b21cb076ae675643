"""The layer-and-language view of ``pmask report``: read a ``pmask bench`` output directory."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pmask.common.errors import PmaskError
from pmask.common.files import read_json

ROW_KEYS = ("treebank", "layer", "decoder")
BASELINE_KEYS = ("treebank", "baseline")
KEPT_ROW_KEYS = ("treebank", "language", "probe", "metric", "head", "layer", "decoder", "root", "sentences", "words")
KEPT_BASELINE_KEYS = ("treebank", "baseline", "root", "words")


def _score_key(row: dict[str, Any], decoder: str | None) -> str | None:
    """The score ``row`` is judged by: its decoder's headline (UUAS for undirected trees) when the row
    holds it, else the first task's headline it holds (a PTB row's sentence F1); None when it holds none."""
    from pmask.eval.scores.columns import decoder_headline, row_headline

    if decoder is not None:
        try:
            key = decoder_headline(decoder)
        except PmaskError:   # a decoder this version does not know: fall back on what the row holds
            key = None
        if key is not None and row.get(key) is not None:
            return key
    key = row_headline(row)
    return key if row.get(key) is not None else None


def _rows(data: dict[str, Any], name: str, required: tuple[str, ...], kept: tuple[str, ...], where: Path
          ) -> list[dict[str, Any]]:
    rows = data.get(name, [])
    if not isinstance(rows, list):
        raise PmaskError(f"{where}: '{name}' must be a list of rows")
    out = []
    for k, row in enumerate(rows):
        missing = [key for key in required if not isinstance(row, dict) or key not in row]
        score_key = None if missing else _score_key(row, row.get("decoder"))
        if score_key is None:
            missing.append("a score (uas, uuas or f1_sentence)")
        if missing:
            raise PmaskError(f"{where}: {name}[{k}] lacks {', '.join(missing)}")
        from pmask.eval.scores.columns import all_layer_keys

        scores = {key: row[key] for key in all_layer_keys(("hoover_uuas",)) if row.get(key) is not None}
        out.append({**{key: row.get(key) for key in kept if key in row}, **scores,
                    "score": row[score_key], "score_key": score_key})
    return out


def read_bench(bench_dir: Path) -> dict[str, Any]:
    """The rows, baselines and settings of ``bench_dir/results.json``.

    Args:
        bench_dir: a ``pmask bench`` output directory (or its ``results.json``).
    Returns:
        ``{"rows": [...], "baselines": [...], "model": ..., "settings": ...}`` with the row keys the page uses
        (treebank, language, layer, decoder, root, uas, uuas, sentences, words).
    Example:
        >>> read_bench(Path("mbert-pud"))["rows"][0]["treebank"]
        'en_pud-ud-test'
    """
    bench_dir = Path(bench_dir)
    path = bench_dir if bench_dir.is_file() else bench_dir / "results.json"
    if not path.is_file():
        raise PmaskError(f"{bench_dir}: not a bench output directory (no results.json)")
    try:
        data = read_json(path)
    except ValueError as err:   # UnicodeDecodeError, json.JSONDecodeError
        raise PmaskError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise PmaskError(f"{path}: expected a JSON object with 'rows' and 'baselines'")
    rows = _rows(data, "rows", ROW_KEYS, KEPT_ROW_KEYS, path)
    if not rows:
        raise PmaskError(f"{path}: no rows")
    from pmask.eval.studies.bench.rows import row_probe, several_metrics

    several = several_metrics(rows)   # bench --metrics: the page shows "pair cpmi" as a probe of its own
    rows = [{**r, "probe": row_probe(r, several)} if several else r for r in rows]
    baselines = _rows(data, "baselines", BASELINE_KEYS, KEPT_BASELINE_KEYS, path)
    model = data.get("model")
    return {"rows": rows, "baselines": baselines,
            "model": model.get("name") if isinstance(model, dict) else model,
            "settings": data.get("settings") if isinstance(data.get("settings"), dict) else {},
            "path": str(path)}
