"""Every named decoder in one table, with one call signature: the decoders' registry (the other extension
points register into a :class:`pmask.common.registry.Registry`, the same concept in the common wing).

Each :class:`Decoder` entry says its task (a :class:`pmask.trees.tasks.TaskEntry`), whether it
is an uninformed baseline, whether it reads a model's impact matrix, whether it has a faithful
(authors') mode, and a one-line description. CLI choices, help text, baseline lists and
setting checks are all derived from :data:`DECODERS`; a new decoder is one entry here.
Per task, :data:`pmask.trees.tasks.TASKS` says which decoders run when none is named (chosen by
:func:`pmask.pipeline.request.resolve`) and which baselines the short reports show.

Every entry's ``fn`` takes one :class:`DecodeInput` and returns ``heads`` (int64, length n,
``heads[k-1]`` = head of word k, 0 = ROOT) for dependency decoders or an ``nltk.Tree``
(label "X", words as leaves) for constituency decoders. Model decoders read the word-level
n x n impact matrix ``F`` (``F[i][j]`` = impact of word j on word i), turned into
``scores[dependent, head]`` by :func:`dependency_scores` (raw impacts, ROOT column 0.0); a
distance matrix (``DecodeInput.distance``, probe ``distance``) is read as ``-F`` by the
spanning-tree decoders and MART, and as it is by ``distance-split``. Baselines ignore ``F``.

Randomised decoders draw from ``np.random.default_rng(seed)``: give each sentence its own
seed (e.g. base seed + sentence index) or the same-length sentences get the same tree.

Example:
    >>> import numpy as np
    >>> decode("right-chain", DecodeInput(words=["a", "b", "c"])).tolist()
    [2, 3, 0]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pmask.common.errors import DecodeError
from pmask.common.registry import Registry
from pmask.trees import baselines
from pmask.trees.cky import cky
from pmask.trees.cle import chu_liu_edmonds
from pmask.trees.distance_split import adjacent_distances, distance_split
from pmask.trees.eisner import eisner
from pmask.trees.faithful import faithful_cle, faithful_eisner
from pmask.trees.faithful_discourse import DiscourseDecoder, wu_cle, wu_eisner, wu_left_chain, wu_right_chain
from pmask.trees.mart import mart
from pmask.trees.scores import dependency_scores
from pmask.trees.tasks import task_entry
from pmask.trees.undirected import check_square, max_spanning_tree, orient, projective_tree

if TYPE_CHECKING:
    from nltk import Tree


@dataclass(frozen=True)
class DecodeInput:
    """Everything a decoder may read for one sentence.

    Attributes:
        words: the sentence's n words.
        F: word-level impact matrix [n, n] (model decoders only).
        F_cls: the authors' layout [n+1, n+1], index 0 = [CLS] (faithful mode only).
        root: 1-based gold root word, or None for a free root (dependency decoders).
        multiroot: allow several words under ROOT (free root only).
        faithful: the authors' pipeline on ``F_cls`` (decoders with ``supports_faithful``).
        seed: int or numpy Generator for the random baselines.
        where: "file:line (sentence id)" for error messages.
        distance: ``F`` is a distance (low = close; probe ``distance``): the spanning-tree decoders
            and MART read ``-F``, ``distance-split`` reads ``F`` itself (and ``-F`` otherwise).
        bias: λ, the right-branching bias of ``distance-split`` (Kim et al. 2020).
        keep: words the undirected decoders keep in faithful mode (False: punctuation, left out);
            ``connect-adjacent`` joins the kept words whenever it is given.
        discourse: the record is a document whose tree is a discourse tree (its unit's
            ``UnitEntry.discourse``): with ``faithful``, the decoder's discourse mode (:attr:`Decoder.discourse`,
            Wu et al.'s discourse pipeline) decodes it.

    ``F`` is read as given: the parse pipeline makes it symmetric first when asked
    (:func:`pmask.trees.undirected.symmetrize`, ``--symmetrize``, ``--absolute``).
    """

    words: Sequence[str]
    F: Any = None
    F_cls: Any = None
    root: int | None = None
    multiroot: bool = False
    faithful: bool = False
    seed: Any = 0
    where: str | None = None
    distance: bool = False
    bias: float = 0.0
    keep: Sequence[bool] | None = None
    discourse: bool = False
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        seed = self.seed
        object.__setattr__(self, "rng", seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed))

    @property
    def n(self) -> int:
        return len(self.words)

    @property
    def place(self) -> str:
        return f"{self.where}: " if self.where else ""


@dataclass(frozen=True)
class Decoder:
    """A named decoder: ``fn(DecodeInput)`` -> heads or tree, and what it needs."""

    name: str
    task: str                       # its task's name (pmask.trees.tasks.TASKS)
    fn: Callable[[DecodeInput], Any]
    needs_model: bool               # reads the impact matrix F
    description: str
    baseline: bool = False          # an uninformed baseline (reported next to model rows)
    supports_faithful: bool = False  # has the authors' mode on the [CLS] layout
    undirected: bool = False         # chooses undirected edges only (score with UUAS); --root directs them
    spans: bool = False             # reads a span chart (probe distortion), not a word-pair matrix
    own_settings: tuple[str, ...] = ()   # parse settings no other kind of decoder reads (distance-split's bias)
    # Wu et al.'s discourse pipeline, its faithful mode on a document of EDUs (DecodeInput.discourse; None: none)
    discourse: Callable[[DecodeInput], Any] | None = None
    # settings of a parse it does not read: refused when given, never recorded (a span chart is no matrix to
    # make symmetric)
    ignores: tuple[str, ...] = ()

    @property
    def settings(self) -> tuple[str, ...]:
        """The parse settings its outputs record besides its name and seed (fields of
        ``pmask.pipeline.decoding.Decoding``): a model decoder's layer and how F is made symmetric, a
        dependency decoder's root, faithful and multiroot, a constituency decoder's faithful where it has the
        authors' mode, and its :attr:`own_settings`; nothing it :attr:`ignores`.

        Example:
            >>> DECODERS["right-chain"].settings, DECODERS["cky"].settings
            (('root', 'faithful', 'multiroot'), ('layer', 'faithful'))
            >>> DECODERS["distance-split"].settings
            ('layer', 'symmetrize', 'absolute', 'faithful', 'bias')
        """
        model = ("layer", "symmetrize", "absolute") if self.needs_model else ()
        tree = task_entry(self.task).settings
        tree += ("faithful",) if self.supports_faithful and "faithful" not in tree else ()
        return tuple(name for name in model + tree + self.own_settings if name not in self.ignores)


# ---------------------------------------------------------------------------- adapters (one signature)

def _need_F(x: DecodeInput, name: str) -> np.ndarray:
    if x.F is None:
        raise DecodeError(f"{x.place}{name} needs an impact matrix F")
    return x.F


def _affinity(x: DecodeInput, name: str) -> np.ndarray:
    """F as scores where high = close: -F for a distance matrix (probe distance), else F itself."""
    F = _need_F(x, name)
    return -np.asarray(F, dtype=np.float64) if x.distance else F


def _spanning_tree(name: str, algorithm: Callable, faithful_algorithm: Callable) -> Callable[[DecodeInput], Any]:
    def run(x: DecodeInput) -> np.ndarray:
        if x.faithful:
            if x.F_cls is None:
                raise DecodeError(f"{x.place}faithful {name} needs the [CLS]-including impact matrix (F_cls)")
            if x.root is None:
                raise DecodeError(f"{x.place}faithful {name} needs the gold root (the paper's setup)")
            if x.distance:
                raise DecodeError(f"{x.place}faithful {name} is the paper's pipeline for perturbed-masking impacts, "
                                  "not for distances")
            return faithful_algorithm(x.F_cls, x.root, where=x.where)
        scores = dependency_scores(_affinity(x, name), where=x.where)
        if scores.shape[0] != x.n + 1:
            raise DecodeError(f"{x.place}F is {scores.shape[0] - 1}x{scores.shape[0] - 1} but the sentence has "
                              f"{x.n} words")
        return algorithm(scores, root=x.root, multiroot=x.multiroot, where=x.where)
    return run


def _undirected(name: str, algorithm: Callable) -> Callable[[DecodeInput], Any]:
    def run(x: DecodeInput) -> np.ndarray:
        W = check_square(_affinity(x, name), x.n, x.where)
        if x.faithful and x.keep is None:
            raise DecodeError(f"{x.place}faithful {name} leaves punctuation out of the tree, which needs UPOS tags")
        return orient(algorithm(W, x.keep if x.faithful else None), x.n, x.root)
    return run


def _chain(name: str, chain: Callable) -> Callable[[DecodeInput], Any]:
    def run(x: DecodeInput) -> np.ndarray:
        return chain(x.n, root=x.root)
    return run


def _discourse(wu: DiscourseDecoder) -> Callable[[DecodeInput], Any]:
    """A decoder's discourse mode: Wu et al.'s decoder on the document's [CLS]-layout matrix (the chains read
    only its length)."""
    def run(x: DecodeInput) -> np.ndarray:
        return wu(x.F_cls, x.root, n=x.n, where=x.where)
    return run


def _random_scores(algorithm: Callable) -> Callable[[DecodeInput], Any]:
    def run(x: DecodeInput) -> np.ndarray:
        return algorithm(baselines.random_scores(x.n, x.rng), root=x.root, multiroot=x.multiroot, where=x.where)
    return run


def _mart(variant: str, name: str) -> Callable[[DecodeInput], Tree]:
    def run(x: DecodeInput) -> Tree:
        return mart(_affinity(x, name), list(x.words), variant=variant, where=x.where)
    return run


def _distance_split(x: DecodeInput) -> Tree:
    d = adjacent_distances(_need_F(x, "distance-split"), distance=x.distance, where=x.where)
    return distance_split(list(x.words), d, bias=x.bias, where=x.where)


def _cky(x: DecodeInput) -> Tree:
    return cky(_need_F(x, "cky"), list(x.words), faithful=x.faithful, where=x.where)


#: The one table: name -> :class:`Decoder`, dependency decoders first, in documentation order (the order of
#: ``--decoder``'s choices); a test registers a decoder here the same way (the recipe's proof).
DECODERS: Registry[Decoder] = Registry("decoder", error=DecodeError)

DECODERS.register(Decoder("eisner", "dependency", _spanning_tree("eisner", eisner, faithful_eisner), True,
        "projective maximum spanning tree of the impact scores (Eisner)", supports_faithful=True,
        discourse=_discourse(wu_eisner)))
DECODERS.register(Decoder("cle", "dependency", _spanning_tree("cle", chu_liu_edmonds, faithful_cle), True,
        "non-projective maximum spanning tree of the impact scores (Chu-Liu/Edmonds)", supports_faithful=True,
        discourse=_discourse(wu_cle)))
DECODERS.register(Decoder("mst", "dependency", _undirected("mst", max_spanning_tree), True,
        "undirected maximum spanning tree of the (symmetrized) scores, Kruskal (Hoover et al. 2021); "
        "--root only directs its edges", supports_faithful=True, undirected=True))
DECODERS.register(Decoder("mst-projective", "dependency", _undirected("mst-projective", projective_tree), True,
        "undirected edges of Eisner's projective tree with a ROOT score of -50 (Hoover et al. 2021); "
        "--root only directs them", supports_faithful=True, undirected=True))
DECODERS.register(Decoder("right-chain", "dependency", _chain("right-chain", baselines.right_chain), False,
        "each word headed by its right neighbour; last word (and gold root) -> ROOT", baseline=True,
        discourse=_discourse(wu_right_chain)))
DECODERS.register(Decoder("left-chain", "dependency", _chain("left-chain", baselines.left_chain), False,
        "each word headed by its left neighbour; first word (and gold root) -> ROOT", baseline=True,
        discourse=_discourse(wu_left_chain)))
DECODERS.register(Decoder("random-projective", "dependency",
        lambda x: baselines.random_projective(x.n, x.rng, root=x.root), False,
        "uniformly random single-rooted projective tree", baseline=True))
DECODERS.register(Decoder("random-eisner", "dependency", _random_scores(eisner), False,
        "Eisner on a U[0,1) random score matrix", baseline=True))
DECODERS.register(Decoder("random-cle", "dependency", _random_scores(chu_liu_edmonds), False,
        "Chu-Liu/Edmonds on a U[0,1) random score matrix", baseline=True))
DECODERS.register(Decoder("connect-adjacent", "dependency",
        lambda x: orient(baselines.connect_adjacent(x.n, x.keep), x.n, x.root),
        False, "each word joined to the next non-punctuation word, undirected (Hoover et al. 2021); --root "
        "only directs the edges", baseline=True, undirected=True))
DECODERS.register(Decoder("mart", "constituency", _mart("three-way", "mart"), True,
        "the paper's top-down three-way splitting of the impact matrix (MART)"))
DECODERS.register(Decoder("mart-binary", "constituency", _mart("binary", "mart-binary"), True,
        "top-down binary splitting of the impact matrix"))
DECODERS.register(Decoder("distance-split", "constituency", _distance_split, True,
        "Kim et al. 2020: top-down split at the largest distance between neighbouring words, with their "
        "right-branching bias --bias", supports_faithful=True, own_settings=("bias",)))
DECODERS.register(Decoder("cky", "constituency", _cky, True,
        "Li & Lu 2023: the binary tree with the smallest sum of span scores, each length L2-normalised (CKY; "
        "span charts of probe distortion)", supports_faithful=True, spans=True, ignores=("symmetrize", "absolute")))
DECODERS.register(Decoder("right-branching", "constituency", lambda x: baselines.right_branching(list(x.words)), False,
        "right-branching binary tree", baseline=True))
DECODERS.register(Decoder("left-branching", "constituency", lambda x: baselines.left_branching(list(x.words)), False,
        "left-branching binary tree", baseline=True))
DECODERS.register(Decoder("balanced", "constituency", lambda x: baselines.balanced(list(x.words)), False,
        "balanced binary tree (left half takes the extra word)", baseline=True))
DECODERS.register(Decoder("random-binary", "constituency",
        lambda x: baselines.random_binary(list(x.words), x.rng), False, "uniformly random binary bracketing",
        baseline=True))


# ---------------------------------------------------------------------------- derived views

def decoders(task: str | None = None, *, baseline: bool | None = None) -> dict[str, Decoder]:
    """The entries of :data:`DECODERS` for ``task`` (None: both), optionally only (non-)baselines."""
    return {n: d for n, d in DECODERS.items()
            if (task is None or d.task == task) and (baseline is None or d.baseline == baseline)}


def decoder_names(task: str | None = None, *, baseline: bool | None = None) -> tuple[str, ...]:
    """Names of :func:`decoders` in table order (e.g. the CLI's choices or a baseline list)."""
    return tuple(decoders(task, baseline=baseline))


def discourse_decoders() -> tuple[str, ...]:
    """The decoders with a discourse mode (Wu et al.'s discourse pipeline, ``--faithful`` on documents)."""
    return tuple(n for n, d in DECODERS.items() if d.discourse is not None)


def get_decoder(name: str) -> Decoder:
    """The entry ``name``; a :class:`DecodeError` listing the decoders otherwise."""
    return DECODERS.lookup(name)


# ---------------------------------------------------------------------------- entry points

def decode(name: str, x: DecodeInput) -> Any:
    """Run decoder ``name`` on one sentence: heads (dependency) or an ``nltk.Tree`` (constituency).

    Args:
        name: a key of :data:`DECODERS`.
        x: the sentence's words and, for model decoders, its impact matrix ``F`` [n, n].

    Returns:
        int64 heads of length n (0 = ROOT), or an ``nltk.Tree`` over ``x.words``.

    Raises:
        DecodeError: unknown name, empty sentence, missing or malformed matrices.
    """
    dec = get_decoder(name)
    task = task_entry(dec.task)
    if x.n < 1:
        raise DecodeError(f"{x.place}cannot {task.empty}")
    fn = dec.fn
    if x.faithful and x.discourse:   # Wu et al.'s discourse pipeline: the last EDU left out
        if dec.discourse is None:
            raise DecodeError(f"{x.place}--faithful on documents is Wu et al.'s discourse pipeline: "
                              f"{', '.join(discourse_decoders())}, not {name}")
        fn = dec.discourse
    out = fn(x)
    if task.per_word and len(out) != x.n:
        raise DecodeError(f"{x.place}{name} returned {len(out)} {task.field} for {x.n} words")
    return out


def _checked(name: str, task: str) -> None:
    if name not in DECODERS or DECODERS[name].task != task:
        names = ", ".join(decoder_names(task))
        raise ValueError(f"unknown {task} decoder {name!r}; choose from {names}")


def decode_dependencies(name: str, n: int, *, F=None, F_cls=None, root: int | None = None,
                        multiroot: bool = False, faithful: bool = False, seed=0,
                        where: str | None = None) -> np.ndarray:
    """Heads (length n, 0 = ROOT) from the dependency decoder ``name`` (see :func:`decode`).

    ``eisner``/``cle``: from ``F`` (n x n) with ``root``/``multiroot`` as in :func:`eisner`;
    with ``faithful=True`` the paper's setup on ``F_cls`` ((n+1)x(n+1), [CLS] = 0) with the
    gold ``root`` (required). Baselines ignore F/F_cls/faithful; the chains and
    ``random-projective`` honour ``root``; ``random-eisner``/``random-cle`` honour
    ``root``/``multiroot``. ``seed``: int or numpy Generator for the random ones.
    """
    _checked(name, "dependency")
    return decode(name, DecodeInput(words=[""] * n, F=F, F_cls=F_cls, root=root, multiroot=multiroot,
                                    faithful=faithful, seed=seed, where=where))


def decode_constituency(name: str, words, *, F=None, seed=0, where: str | None = None, distance: bool = False,
                        bias: float = 0.0, faithful: bool = False) -> Tree:
    """An ``nltk.Tree`` over ``words`` from the constituency decoder ``name`` (``F`` for the model decoders:
    a word-pair matrix, or a span chart for ``cky``; ``distance``/``bias``/``faithful`` as in :class:`DecodeInput`)."""
    _checked(name, "constituency")
    return decode(name, DecodeInput(words=list(words), F=F, seed=seed, where=where, distance=distance, bias=bias,
                                    faithful=faithful))


def decoder_task(name: str) -> str:
    """The task of a registered decoder (the one place that decides it)."""
    return get_decoder(name).task


def decoder_reads_spans(name: str) -> bool:
    """Whether decoder ``name`` reads a span chart (probe distortion) rather than a word-pair matrix."""
    return name in DECODERS and DECODERS[name].spans


def decoder_needs_model(name: str) -> bool:
    """Whether decoder ``name`` reads impacts (False for baselines and unknown names)."""
    return name in DECODERS and DECODERS[name].needs_model
