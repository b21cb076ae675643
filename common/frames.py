"""pandas data frames from result rows; pandas is the optional extra ``pmask[pandas]``.

Every ``to_pandas()`` of pmask's results (comparisons, sweeps, bench rows, per-sentence scores,
breakdowns) goes through :func:`data_frame`, so a missing pandas gives one clear error naming
the extra instead of a bare ``ModuleNotFoundError``. The frames themselves (which rows a comparison,
a sweep, a bench study or a score gives) are :mod:`pmask.eval.outputs.frames`, the same concept one
layer up.

Example:
    >>> float(data_frame([{"layer": 1, "uas": 40.0}, {"layer": 2, "uas": 45.5}], index="layer").loc[2, "uas"])
    45.5
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from pmask.common.errors import PmaskError

__all__ = ["MissingExtraError", "data_frame", "flatten", "require_pandas"]


class MissingExtraError(PmaskError, ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""


def require_pandas() -> Any:
    """The ``pandas`` module, or :class:`MissingExtraError` naming ``pip install 'pmask[pandas]'``."""
    try:
        import pandas
    except ImportError:
        raise MissingExtraError("to_pandas() needs pandas, which is not installed: "
                                "pip install 'pmask[pandas]'") from None
    return pandas


def flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings become dotted columns: ``{"settings": {"layer": 3}}`` -> ``{"settings.layer": 3}``.

    Example:
        >>> flatten({"name": "x", "settings": {"layer": 3}})
        {'name': 'x', 'settings.layer': 3}
    """
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def data_frame(rows: Iterable[Mapping[str, Any]], *, columns: Sequence[str] | None = None,
               index: str | Sequence[str] | None = None) -> Any:
    """A ``pandas.DataFrame`` with one row per mapping (nested mappings flattened, see :func:`flatten`).

    Args:
        rows: the records.
        columns: the column order (default: first-seen order of the keys); with no rows these
            columns make the empty frame's header.
        index: column(s) moved into the index.

    Returns:
        The frame; a column of whole numbers that some rows lack is pandas' nullable ``Int64``
        (``<NA>`` there) rather than floats.
    """
    pandas = require_pandas()
    flat = [flatten(r) for r in rows]
    if columns is None:
        seen: dict[str, None] = {}
        for r in flat:
            seen.update(dict.fromkeys(r))
        columns = list(seen)
    frame = pandas.DataFrame(flat, columns=list(columns))
    for column in columns:   # whole numbers stay whole where some rows lack them (a baseline has no layer)
        values = [r[column] for r in flat if r.get(column) is not None]
        if values and len(values) < len(flat) and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("Int64")
    if index is not None:
        frame = frame.set_index(index)
    return frame
