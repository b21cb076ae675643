"""Issue 18, defect 3: a store records the selection it was made with (format, --limit, --max-words)
and is read back with it; a reader may narrow it, never widen it; old stores open as before."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.source import ImpactSource

LENGTHS = [5, 12, 3, 20, 4, 8, 2]   # words per sentence; --max-words 8 keeps 5, 3, 4, 8, 2


def _corpus(path: Path) -> Path:
    blocks = []
    for k, n in enumerate(LENGTHS, start=1):
        rows = [f"{i}\tw{k}x{i}\tw\tX\tX\t_\t{0 if i == n else i + 1}\t{'root' if i == n else 'dep'}\t_\t_"
                for i in range(1, n + 1)]
        blocks.append(f"# sent_id = s{k}\n" + "\n".join(rows) + "\n")
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory, tiny_bert_dir):
    """A corpus and a store made from it with --max-words 8 --limit 3 (sentences s1, s3, s5)."""
    base = tmp_path_factory.mktemp("selection")
    corpus = _corpus(base / "corpus.conllu")
    store = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--max-words", "8", "--limit", "3",
                 "--layers", "1,2", "-q", "-o", str(store)]) == 0
    return corpus, store


def _ids(path: Path) -> list[str]:
    return [line.split("=", 1)[1].strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("# sent_id")]


def test_the_manifest_records_the_selection(made):
    _, store = made
    corpus = json.loads((store / "manifest.json").read_text(encoding="utf-8"))["corpus"]
    assert corpus["selection"] == {"format": "conllu", "limit": 3, "max_words": 8}


def test_parse_sweep_and_heatmap_read_the_store_back_without_repeating_the_flags(made, tmp_path, capsys):
    _, store = made
    out = tmp_path / "p.conllu"
    assert main(["parse", str(store), "--layer", "2", "-q", "-o", str(out)]) == 0, capsys.readouterr().err
    assert _ids(out) == ["s1", "s3", "s5"]
    meta = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))
    assert meta["corpus"]["max_words"] == 8 and meta["corpus"]["format"] == "conllu"
    assert main(["sweep", str(store), "-q", "--json", str(tmp_path / "s.json")]) == 0, capsys.readouterr().err
    assert main(["heatmap", str(store), "--sentence", "s5", "--layer", "2", "-q", "-o", str(tmp_path / "s5.svg")]) == 0
    assert (tmp_path / "s5.svg").is_file()


def test_a_narrower_selection_keeps_the_store_positions(made, tmp_path, capsys):
    _, store = made
    whole = ImpactSource.open(CorpusSpec(store))
    narrow = ImpactSource.open(CorpusSpec(store, max_words=4))
    assert [s.id for s in narrow.sentences] == ["s3", "s5"] and narrow.positions == [1, 2]
    by_id = {s.id: imp.F for s, imp in zip(whole.sentences, whole.impacts(2))}
    for s, imp in zip(narrow.sentences, narrow.impacts(2)):
        assert (by_id[s.id] == imp.F).all()
    assert [s.id for s in ImpactSource.open(CorpusSpec(store, limit=2)).sentences] == ["s1", "s3"]
    out = tmp_path / "n.conllu"
    code = main(["parse", str(store), "--max-words", "4", "--layer", "2", "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert _ids(out) == ["s3", "s5"]


def test_a_wider_selection_or_another_format_is_refused_in_one_line(made, tmp_path, capsys):
    _, store = made
    assert main(["parse", str(store), "--max-words", "10", "-o", str(tmp_path / "w.conllu")]) == 1
    err = capsys.readouterr().err
    assert "--max-words 10" in err and "at most 8 words" in err and len(err.strip().splitlines()) == 1
    assert main(["parse", str(store), "--format", "text", "-o", str(tmp_path / "t.conllu")]) == 1
    assert "--format text conflicts with the store" in capsys.readouterr().err


def test_a_store_without_a_recorded_selection_opens_as_before(made, tmp_path, capsys):
    corpus, store = made
    old = tmp_path / "old-store"
    old.mkdir()
    for f in store.iterdir():
        (old / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((old / "manifest.json").read_text(encoding="utf-8"))
    del manifest["corpus"]["selection"]
    (old / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "o.conllu"
    code = main(["parse", str(old), "--max-words", "8", "--layer", "2", "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert _ids(out) == ["s1", "s3", "s5"]
    assert main(["parse", str(old), "--layer", "2", "-o", str(out)]) == 1
    assert "another selection" in capsys.readouterr().err
