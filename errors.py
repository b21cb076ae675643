"""Exceptions whose message is the one line shown to a command-line user."""


class PmaskError(Exception):
    """Base class: ``str(err)`` is a complete one-line message (it names the file, line or sentence)."""


class CorpusError(PmaskError):
    """Malformed or unreadable input corpus."""


class ModelError(PmaskError):
    """A model or tokenizer could not be loaded or used."""


class StoreError(PmaskError):
    """An impact store is missing, corrupt or does not match the request."""


class DecodeError(PmaskError):
    """Scores that no decoder can use (NaN, infinite, wrong shape)."""


class LayerError(PmaskError, ValueError):
    """A requested layer does not exist in the model (or the request is malformed)."""


class MissingSentenceError(StoreError, KeyError):
    """No stored sentence under that key (also a KeyError, so ``in``/``dict`` idioms work)."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
