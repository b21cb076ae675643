"""The package version, defined once (``setup.py``/``pyproject.toml`` and ``pmask.__version__`` read it)."""

__version__ = "0.1.0"
