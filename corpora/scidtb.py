"""SciDTB discourse dependency trees (Yang & Li 2018): one JSON document per ``.dep`` file.

A file holds ``{"root": [{"id", "parent", "text", "relation"}, …]}``: node 0 is ROOT (``parent``
-1), every other node an elementary discourse unit (EDU) in text order, ``parent`` its head EDU
(0 for the root EDU). A document becomes one :class:`~pmask.corpora.sentence.Sentence` with
``unit == "edu"``: its "words" are the EDU texts (a trailing ``<S>`` sentence marker and outer
whitespace removed, inner spaces kept), its heads the parents, its deprels the relations. The
parsed JSON stays in ``source`` for :func:`write_scidtb`, which writes it back with the predicted
parents; ``meta["sentence_end"]`` records which EDUs had ``<S>`` and ``meta["authors_words"]`` the
texts as Wu et al.'s reader leaves them (it removes ``<S>`` only at the very end of the text, so an
EDU ending in ``<S>`` and a space or ``\\r`` keeps it: ``--faithful`` reads those).

Bad input is refused in one line naming the file, its line and the EDU (:func:`parse_scidtb`).

Example:
    >>> doc = parse_scidtb('{"root": [{"id": 0, "parent": -1, "text": "ROOT"}, '
    ...                    '{"id": 1, "parent": 0, "text": "We study X <S>"}, '
    ...                    '{"id": 2, "parent": 1, "text": "because it matters . <S>"}]}', "d.dep", "d")
    >>> doc.words, doc.heads, doc.unit
    (['We study X', 'because it matters .'], [0, 1], 'edu')
"""
from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pmask.common.errors import CorpusError, OutputError, json_problem
from pmask.common.files import write_output
from pmask.common.labels import plural
from pmask.common.output_folders import write_output_folder
from pmask.corpora._util import corpus_files, display_name, is_stdin, read_utf8, select
from pmask.corpora.head_maps import find_cycle
from pmask.corpora.sentence import NO_HEAD, Sentence

logger = logging.getLogger(__name__)

SUFFIX = ".dep"
SENTENCE_END = "<S>"
_EXPECTED = 'expected {"root": [{"id", "parent", "text"}, ...]}'
_ID_KEY = re.compile(r'"id"\s*:')


def document_id(file_name: str) -> str:
    """A document's id from its file name: the name less ``.dep`` and a trailing ``.edu.txt`` (``D14-1001``)."""
    stem = file_name[:-len(SUFFIX)] if file_name.endswith(SUFFIX) else Path(file_name).stem
    return stem[:-len(".edu.txt")] if stem.endswith(".edu.txt") else stem


def clean_edu(text: str) -> tuple[str, bool]:
    """An EDU's text without its trailing ``<S>`` and outer whitespace (tab, CR, LF inside become spaces),
    and whether it had the marker."""
    text = re.sub(r"[\t\r\n]", " ", text).strip()
    if text.endswith(SENTENCE_END):
        return text[:-len(SENTENCE_END)].strip(), True
    return text, False


def authors_edu(text: str) -> str:
    """An EDU's text as Wu et al.'s ``data_scidtb.py`` leaves it: ``<S>`` cut only when it ends the text."""
    return text[:-len(SENTENCE_END)] if text.endswith(SENTENCE_END) else text


def _node_lines(text: str, count: int) -> list[int]:
    """The file line of each node's ``"id"`` key (line 1 for all when the keys cannot be matched to nodes)."""
    found = [text.count("\n", 0, m.start()) + 1 for m in _ID_KEY.finditer(text)]
    return found if len(found) == count else [1] * count


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(map(str, value))[:4])
        return f"an object with keys {keys}" if keys else "an empty object"
    return {list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(type(value), "a number")


def _nodes(data: Any, name: str) -> list[dict[str, Any]]:
    """The ``root`` list of a SciDTB document, every node an object with id, parent and text."""
    if not isinstance(data, dict) or not isinstance(data.get("root"), list):
        raise CorpusError(f"{name}:1: not a SciDTB document: {_EXPECTED}, found {_describe(data)}")
    for k, node in enumerate(data["root"]):
        if not isinstance(node, dict) or not {"id", "parent", "text"} <= set(node):
            raise CorpusError(f"{name}:1: not a SciDTB document: {_EXPECTED}, found node {k} as {_describe(node)}")
    return data["root"]


def _check_nodes(nodes: list[dict[str, Any]], name: str, lines: list[int], doc: str) -> None:
    """Ids 0..n in order, node 0 ROOT, integer parents, text in every EDU, at least two EDUs."""
    for k, node in enumerate(nodes):
        at = f"{name}:{lines[k]}"
        if node["id"] != k or isinstance(node["id"], bool):
            after = f"after {k - 1}" if k else "first"
            raise CorpusError(f"{at}: EDU ids must run 0..n in order (found {node['id']!r} {after}) (document {doc})")
        if node["parent"] is not None and (not isinstance(node["parent"], int) or isinstance(node["parent"], bool)):
            raise CorpusError(f"{at}: parent {node['parent']!r} of EDU {k} is not an integer (document {doc})")
        if not isinstance(node["text"], str):
            raise CorpusError(f"{at}: text of EDU {k} is not a string (document {doc})")
    if not nodes or nodes[0]["parent"] != -1:
        raise CorpusError(f"{name}:{lines[0] if lines else 1}: node 0 must be ROOT with parent -1 (document {doc})")
    for k, node in enumerate(nodes[1:], start=1):
        if not clean_edu(node["text"])[0]:
            raise CorpusError(f"{name}:{lines[k]}: EDU {k} has no text (document {doc})")
    if len(nodes) == 2:
        raise CorpusError(f"{name}:{lines[1]}: document {doc} has one EDU; a discourse tree needs at least two "
                          f"(leave it out)")
    if len(nodes) < 2:
        raise CorpusError(f"{name}:{lines[0] if lines else 1}: document {doc} has no EDU")


def check_parents(heads: Sequence[int], name: str, lines: Sequence[int], doc: str) -> None:
    """Raise CorpusError unless ``heads`` (``heads[k-1]`` = parent of EDU k, 0 = ROOT) is a tree;
    ``lines[k-1]`` is EDU k's line. A parent of -1 (:data:`NO_HEAD`: EDU 1 of test D14-1042 and of dev
    D14-1080 and D14-1099, each of which also has a root EDU) is kept as no gold head: it is scored and
    never correct, as in Wu et al.'s scoring."""
    n = len(heads)
    for k, h in enumerate(heads, start=1):
        if not (0 <= h <= n or h == NO_HEAD):
            raise CorpusError(f"{name}:{lines[k - 1]}: parent {h} of EDU {k} is out of range 0..{n} (document {doc})")
    if 0 not in heads:
        raise CorpusError(f"{name}:{lines[0]}: no EDU is attached to ROOT (parent 0) (document {doc})")
    cycle = find_cycle([0 if h == NO_HEAD else h for h in heads])
    if cycle is not None:
        edus = sorted(cycle.words)
        raise CorpusError(f"{name}:{lines[edus[0] - 1]}: parents form a cycle through EDUs "
                          f"{' '.join(map(str, edus))} (document {doc})")


def _say_gold_root(heads: Sequence[int], name: str, lines: Sequence[int], doc: str) -> None:
    """One note for a document with several EDUs under ROOT (test D14-1004, dev D14-1052 and P14-1127): its gold
    root is the first of them, as Wu et al.'s ``find_root`` takes it (so that their figures are reproduced, and
    the standard test set is not refused); the others are scored like any EDU. A note, not a warning: said with
    what was read once a command's checks pass, dropped with the rest when it is refused (one line)."""
    roots = [k for k, h in enumerate(heads, start=1) if h == 0]
    if len(roots) > 1:
        listed = ", ".join(map(str, roots[:-1])) + f" and {roots[-1]}"
        others = " and ".join(map(str, roots[1:])) if len(roots) == 2 else listed.split(", ", 1)[1]
        logger.info("%s:%s: EDUs %s are %s under ROOT (document %s): its gold root is EDU %d, the first, as Wu et "
                    "al. take it; root gold gives ROOT EDU %d alone (faithful decoding nudges EDU %d alone), and "
                    "EDU%s %s %s scored as any other", name, lines[roots[1] - 1], listed,
                    "both" if len(roots) == 2 else "all", doc, roots[0], roots[0], roots[0],
                    "s" if len(roots) > 2 else "", others, "are" if len(roots) > 2 else "is")


def parse_scidtb(text: str, name: str, doc: str) -> Sentence:
    """One SciDTB document from its JSON ``text`` (``name`` for messages, ``doc`` its id).

    Raises:
        CorpusError: not JSON, not SciDTB, ids out of order, an EDU without text, a parent outside the
            document, a cycle, no root, or a single EDU: ``name:line: what (document ID)``.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CorpusError(f"{name}:{err.lineno}: not JSON: {json_problem(err)}") from None
    nodes = _nodes(data, name)
    lines = _node_lines(text, len(nodes))
    _check_nodes(nodes, name, lines, doc)
    edus = nodes[1:]
    # null: no head (what write_scidtb writes for the EDU --faithful leaves out, or a skipped document)
    parents = [NO_HEAD if node["parent"] is None else int(node["parent"]) for node in edus]
    heads: list[int] | None = None
    if not all(node["parent"] is None for node in edus):
        check_parents(parents, name, lines[1:], doc)
        _say_gold_root(parents, name, lines[1:], doc)
        heads = parents
    cleaned = [clean_edu(node["text"]) for node in edus]
    return Sentence(id=doc, words=[w for w, _ in cleaned], heads=heads,
                    deprels=[str(node.get("relation", "_")) for node in edus], source=data, path=name,
                    line=lines[1], unit="edu",
                    meta={"word_lines": lines[1:], "sentence_end": [end for _, end in cleaned],
                          "authors_words": [authors_edu(node["text"]) for node in edus],
                          "bom": text.startswith("\ufeff")})


def _documents(path: Path) -> Iterator[Sentence]:
    seen: dict[str, str] = {}
    for file in corpus_files(path, SUFFIX):
        doc = "stdin" if is_stdin(file) else document_id(file.name)
        if doc in seen:
            raise CorpusError(f"{display_name(path)}: documents {seen[doc]} and {file.name} share the id {doc}")
        seen[doc] = file.name
        raw = _raw_bytes_bom(file)
        sent = parse_scidtb(read_utf8(file), display_name(file), doc)
        sent.meta["bom"] = raw
        sent.meta["file_name"] = None if is_stdin(file) else file.name
        yield sent


def _raw_bytes_bom(file: Path) -> bool:
    """Whether a file starts with a UTF-8 byte-order mark (standard input: no)."""
    if is_stdin(file):
        return False
    try:
        with open(file, "rb") as fh:
            return fh.read(3) == b"\xef\xbb\xbf"
    except OSError:
        return False   # read_utf8 reports it


def read_scidtb(path: str | os.PathLike, *, max_words: int | None = None, limit: int | None = None) -> list[Sentence]:
    """Read one SciDTB ``.dep``/``.json`` file, a folder of ``.dep`` files (sorted by name) or standard input.

    Args:
        path: the file, folder or ``-``.
        max_words: skip documents of more than this many EDUs (None keeps all).
        limit: return at most this many documents, counted after the ``max_words`` filter.

    Returns:
        One Sentence per document (``unit == "edu"``), id = the file name less ``.edu.txt.dep``.

    Raises:
        CorpusError: malformed input (see :func:`parse_scidtb`), or two files of one document id.

    Example:
        >>> [d.id for d in read_scidtb("tests/data/scidtb", limit=2)]
        ['A-1', 'A-2']
    """
    return select(_documents(Path(path)), max_words=max_words, limit=limit, name=display_name(path))


def format_scidtb(sent: Sentence, heads: Sequence[int] | None) -> str:
    """The document's JSON with each EDU's ``parent`` set to its predicted head (``null`` for
    :data:`~pmask.corpora.sentence.NO_HEAD` or a skipped document) and ``relation`` to ``"_"``; texts
    as read, tab indentation, a byte-order mark when the input had one."""
    data = copy.deepcopy(sent.source) if isinstance(sent.source, dict) else {
        "root": [{"id": 0, "parent": -1, "text": "ROOT", "relation": "null"}]
        + [{"id": k, "parent": None, "text": w, "relation": "_"} for k, w in enumerate(sent.words, start=1)]}
    nodes = data["root"]
    if heads is not None and len(heads) != len(nodes) - 1:
        raise CorpusError(f"{sent.where()}: {len(heads)} predicted heads for {len(nodes) - 1} EDUs")
    for k, node in enumerate(nodes[1:]):
        h = None if heads is None else int(heads[k])
        node["parent"] = None if h is None or h == NO_HEAD else h
        node["relation"] = "_"
    text = json.dumps(data, indent="\t", ensure_ascii=False) + "\n"
    return ("\ufeff" if sent.meta.get("bom") else "") + text


def write_scidtb(sentences: Sequence[Sentence], heads_list: Sequence[Sequence[int] | None],
                 path: str | os.PathLike) -> None:
    """Write predicted trees as SciDTB JSON: one document to a ``.dep``/``.json`` file, or a folder
    (its parent must exist) of one ``<id>.edu.txt.dep`` file (the input's name) per document. Either replaces
    what was there, as shell redirection replaces a file: a folder whole, and only one that holds nothing
    but ``.dep`` files (:func:`pmask.common.output_folders.write_output_folder`).

    Raises:
        OutputError: several documents for one file, or a folder that cannot be written.
    """
    path = Path(path)
    if path.suffix and not path.is_dir():   # a file (.dep or .json): one document
        if len(sentences) != 1:
            raise OutputError(f"{path}: one SciDTB file holds one document, not {len(sentences)}; name a folder "
                              f"to write one file per document")
        write_output(path, format_scidtb(sentences[0], heads_list[0]))
        return
    write_output_folder(path, {sent.meta.get("file_name") or f"{sent.id}.edu.txt{SUFFIX}": format_scidtb(sent, heads)
                               for sent, heads in zip(sentences, heads_list)}, SUFFIX)


def authors_texts_differ(documents: Sequence[Sentence]) -> list[tuple[Sentence, int]]:
    """``(document, number of its EDUs)`` for each document whose EDU texts Wu et al.'s reader leaves otherwise than
    pmask's beyond outer spaces (an ``<S>`` kept inside an EDU's text: 125 EDUs in 28 SciDTB test documents):
    impacts computed from the clean texts (a store's) differ there from theirs (``--faithful`` on the corpus)."""
    out = []
    for d in documents:
        theirs = d.meta.get("authors_words") or d.words
        count = sum(a.strip() != w.strip() for a, w in zip(theirs, d.words))
        if count:
            out.append((d, count))
    return out


def authors_documents(documents: Sequence[Sentence]) -> list[Sentence]:
    """Copies of ``documents`` whose EDU texts are as Wu et al.'s reader leaves them (``meta["authors_words"]``:
    an ``<S>`` followed by a space or ``\\r`` stays, and is tokenised as ``<``, ``s``, ``>``): the input of
    ``--faithful``, so that its matrices equal theirs. Documents without that record are kept as they are."""
    return [dataclasses.replace(d, words=list(d.meta["authors_words"])) if d.meta.get("authors_words") else d
            for d in documents]


def say_clean_texts(store: Any, documents: Sequence[Sentence]) -> None:
    """One line when a store's matrices, of the clean EDU texts, are decoded faithfully where Wu et al.'s texts
    differ (:func:`authors_texts_differ`; ``--faithful`` on the corpus computes theirs, so its trees can differ)."""
    differ = authors_texts_differ(documents)
    if differ:
        names = ", ".join(d.id for d, _ in differ[:3]) + (", …" if len(differ) > 3 else "")
        logger.warning("%s: faithful decoding reads this store's impacts of the clean EDU texts, but Wu et al.'s "
                       "reader keeps \"<S>\" inside %s of %s (%s): their trees can differ from a faithful run on "
                       "the corpus without a store, which computes the texts as theirs", store,
                       plural(sum(k for _, k in differ), "EDU"), plural(len(differ), "document"), names)
