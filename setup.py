"""Installs the repository root as the import package ``pmask``."""
from setuptools import find_packages, setup

SUBPACKAGES = [p for p in find_packages(".", exclude=["tests", "tests.*", "benchmarks", "benchmarks.*"])]

setup(
    name="pmask",
    version="0.1.0",
    description="Perturbed Masking: parameter-free syntax induction from masked language models",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    package_dir={"pmask": "."},
    packages=["pmask"] + [f"pmask.{p}" for p in SUBPACKAGES],
    package_data={"pmask.eval.html": ["assets/*.js", "assets/*.css"]},
    install_requires=[
        "torch>=2.1",
        "transformers>=4.40",
        "networkx>=3.0",
        "conllu>=4.5",
        "numpy>=1.24",
        "nltk>=3.8",
        "safetensors>=0.4",
        "tqdm>=4.60",
        "matplotlib>=3.7",
    ],
    extras_require={"test": ["pytest>=7", "hypothesis>=6", "PYEVALB>=0.1.3"]},
    entry_points={"console_scripts": ["pmask=pmask.cli:main"]},
)
