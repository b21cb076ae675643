"""What the engine asks of its records' unit (``pmask.perturb.engine.units``): documents of EDUs run as their
unit's job, and a document is never truncated nor left out: one exactly as long as the model's positions runs,
one piece longer is refused, naming it (issue 47 item 15, a planted bug no test caught: ``>`` made ``>=``).
The lengths are counted here with the tokenizer itself."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmask.common.errors import PmaskError
from pmask.corpora import read_corpus
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.models.load import load_model
from pmask.perturb.testing import make_tiny_bert

SCIDTB = Path(__file__).resolve().parents[2] / "data" / "scidtb"


def _pieces(tokenizer, edus: list[str]) -> int:
    """A document's model input: each EDU tokenised alone, between [CLS] and [SEP]."""
    return 2 + sum(len(tokenizer(e, add_special_tokens=False)["input_ids"]) for e in edus)


@pytest.fixture(scope="module")
def docs_and_length(tmp_path_factory):
    """The fixture documents and the longest one's input length, counted with a tokenizer of their words."""
    docs = read_corpus(SCIDTB)
    words = sorted({w.lower() for d in docs for e in d.words for w in re.findall(r"\w+|[^\w\s]", e)})
    probe = make_tiny_bert(tmp_path_factory.mktemp("count"), words, max_positions=512)
    tok = load_model(str(probe), device="cpu").tokenizer
    return docs, words, max(_pieces(tok, d.words) for d in docs)


@pytest.mark.parametrize("spare", [0, -1])
def test_a_document_as_long_as_the_positions_runs_and_one_piece_longer_is_refused(tmp_path, docs_and_length, spare):
    docs, words, longest = docs_and_length
    model = load_model(str(make_tiny_bert(tmp_path / "m", words, max_positions=longest + spare)), device="cpu")
    assert model.max_length == longest + spare

    def run() -> list:
        return list(impact_matrices(model, docs, [-1], metric="dist", subword="avg", tokenize="words"))

    if spare == 0:
        assert all(F is not None and F.shape[1] == len(d) for F, d in zip(run(), docs))
        return
    with pytest.raises(PmaskError, match=rf"1 document exceeds the {longest - 1} positions of .*: \S+ "
                                         rf"\({longest} pieces\); pmask never truncates a document"):
        run()
