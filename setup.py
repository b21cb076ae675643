"""What the root-as-package layout needs (the repository root is the import package ``pmask``);
every other piece of metadata is in ``pyproject.toml``."""
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_LIBRARY = ["tests", "tests.*", "benchmarks", "benchmarks.*", "tools", "tools.*", "docs", "docs.*",
               "build", "build.*", "dist", "dist.*"]


class LibraryOnly(build_py):
    """Leaves this file out of the wheel: in the root-as-package layout it would become ``pmask/setup.py``."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "pmask" and m[1] == "setup")]


setup(
    package_dir={"pmask": "."},
    packages=["pmask"] + [f"pmask.{p}" for p in find_packages(".", exclude=NOT_LIBRARY)],
    # the bundled models (models/<name>/: weights, config, tokenizer, meta.json, card, NOTICE) ship in the wheel
    package_data={"pmask.eval.html": ["assets/*.js", "assets/*.css"], "pmask": ["models/*/*"]},
    cmdclass={"build_py": LibraryOnly},
)
