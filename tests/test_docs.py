"""The README and the documentation site (docs/, mkdocs.yml): every command they show is one the tests run or check.

The Python examples (``docs/python-api.md``, ``docs/notebook.md``) run as written, with a tiny local model in
place of bert-base-uncased; the main job's commands (the README's, the same as the site's home page) run once,
offline, with the bundled model. Every ``pmask`` command of every page runs too, in page order in one working
directory (:func:`test_every_pmask_command_shown_runs`), with the substitutions that test lists: a tiny random
model for a hub model, small fixtures for the treebanks. Every command in a ``bash`` block is also checked: a
``pmask`` command (also under ``torchrun``) must parse with pmask's own argument parser, a script must exist
and define every flag it is given, and a set-up or site command must be one that ``.ci/run`` runs. Links between
the pages, and anchors into them, must resolve; every page is in the site's navigation. ``.ci/run`` builds the
site with ``mkdocs build --strict``.
"""
from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PUD = ROOT / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
MAIN_JOB = "## The main job"


def nav_pages() -> list[str]:
    """The site's pages in navigation order (paths under docs/)."""
    yaml = pytest.importorskip("yaml")
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
    walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    return found


def pages() -> list[Path]:
    """The README, then every page of the site in navigation order."""
    return [ROOT / "README.md"] + [DOCS / p for p in nav_pages()]


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def python_blocks() -> list[str]:
    return [b for page in pages() for b in blocks(page, "python")]


def shown_commands() -> list[tuple[str, str]]:
    """(page, command) for every command line of every ``bash`` block: continuations joined, comments dropped."""
    out = []
    for page in pages():
        for block in blocks(page, "bash"):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    out.append((page.name, line))
    return out


def test_docs_have_the_api_example():
    api = blocks(DOCS / "python-api.md", "python")
    assert api and "from pmask.perturb.models.load import load_model" in api[0]


def test_docs_python_runs(tiny_bert_dir, tmp_path, monkeypatch):
    if not PUD.is_file():
        pytest.skip("shared PUD data not present")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en_pud-ud-test.conllu").symlink_to(PUD.resolve())
    code = "\n".join(python_blocks()).replace('"bert-base-uncased"', repr(str(tiny_bert_dir)))
    code = code.replace("    ...  #", "    pass  #")
    namespace: dict = {}
    exec(compile(code, "docs", "exec"), namespace)
    from pmask.corpora import read_corpus

    pred = read_corpus(tmp_path / "pred.conllu")
    gold = namespace["sents"]
    assert [p.words for p in pred] == [g.words for g in gold]
    pairs = [(int(ph), int(gh)) for p, g in zip(pred, gold) for ph, gh in zip(p.heads, g.heads)]
    score = namespace["score"]
    assert score.total == len(pairs) == sum(len(g.words) for g in gold)
    assert score.correct == sum(ph == gh for ph, gh in pairs)
    assert score.uas == pytest.approx(100 * score.correct / score.total)
    assert [p.root for p in pred] == [g.root for g in gold]  # the gold root is given, as the docs say
    assert namespace["tree"].leaves() == namespace["sents"][-1].words
    evaluation = namespace["evaluation"]   # pmask.evaluate on the file written above: the same words, the same UAS
    assert (evaluation.score.total, evaluation.score.correct) == (score.total, score.correct)
    assert "right-chain" in evaluation.baselines


def main_job(path: Path) -> list[str]:
    section = path.read_text(encoding="utf-8").split(MAIN_JOB, 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)[1]
    return [line for line in block.splitlines() if line.startswith("pmask ")]


def test_readme_main_job_runs_offline_with_the_bundled_model(tmp_path, monkeypatch, capsys):
    """The main job's first commands, as written, right after set-up: no model named, nothing downloaded.
    The site's home page shows the same commands, so they run once for both."""
    from pmask.cli import main
    from pmask.perturb.models import bundled

    assert main_job(DOCS / "index.md") == main_job(ROOT / "README.md")
    commands = [shlex.split(line) for line in main_job(ROOT / "README.md")]
    assert [c[1] for c in commands] == ["parse", "eval"] and not any("--model" in c for c in commands)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bundled, "_announced", set())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    for command in commands:
        assert main(command[1:]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "no model given: using the bundled pmask-tiny-en" in err
    assert "pmask-tiny-en" in out and "right-chain" in out   # the eval table: the model's row and the baselines


def test_the_main_jobs_outputs_land_where_git_ignores_them():
    """Issue 47 item 14: the README's main job wrote mini-pred.conllu and its .meta.json as untracked files in the
    repository's root. Each output it names (``-o``), and the .meta.json beside it, matches a root pattern of
    .gitignore (read here, matched with fnmatch as git matches a pattern without a slash in its middle)."""
    import fnmatch

    patterns = [line.strip().lstrip("/") for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]
    outputs = [c[c.index("-o") + 1] for c in map(shlex.split, main_job(ROOT / "README.md")) if "-o" in c]
    assert outputs
    for name in outputs + [f"{o}.meta.json" for o in outputs]:
        assert "/" not in name and any(fnmatch.fnmatch(name, p.rstrip("/")) for p in patterns), name


def _pmask_args(command: str) -> list[str] | None:
    """The arguments after ``pmask`` (or ``-m pmask`` under torchrun), environment assignments left out."""
    command = re.sub(r"\$\(.*?\)", "HOST", command).replace("$D", "../shared/data")
    words = shlex.split(command)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]
    if words[:1] == ["pmask"]:
        return words[1:]
    if "-m" in words and words[words.index("-m") + 1:words.index("-m") + 2] == ["pmask"]:
        return words[words.index("-m") + 2:]
    return None


def _script_flags_exist(words: list[str]) -> None:
    script = ROOT / words[0]
    assert script.is_file(), f"{words[0]} does not exist"
    source = script.read_text(encoding="utf-8")
    for flag in (w.split("=", 1)[0] for w in words[1:] if w.startswith("--")):
        assert f'"{flag}"' in source or f"'{flag}'" in source or f"{flag})" in source, f"{words[0]} has no {flag}"


def test_the_development_page_gives_the_suites_size_as_the_whole_suite_collects_it(request):
    """Issue 47 item 14: docs/development.md gave an old test count ("~1540 tests"). When the whole suite runs
    (this session collected tests from nine in ten test modules at least, as where an optional package is missing;
    not a file or ``-k`` subset), the count the page gives is the number collected, within 10%."""
    stated = re.search(r"~([\d,]+) tests", (DOCS / "development.md").read_text(encoding="utf-8"))
    assert stated, "docs/development.md names no test count"
    collected = {Path(str(item.path)) for item in request.session.items}
    modules = {p for p in (ROOT / "tests").rglob("test_*.py") if re.search(r"^def test_", p.read_text(), re.M)}
    if len(modules & collected) < 0.9 * len(modules):
        pytest.skip("the whole suite is not collected in this session")
    count, said = len(request.session.items), int(stated[1].replace(",", ""))
    assert abs(count - said) <= 0.1 * count, f"docs/development.md says ~{said} tests; the suite has {count}"


def test_every_command_shown_is_run_or_checked(capsys):
    """Each command of a bash block is parsed by pmask's parser (a ``pmask`` command: each is also run, by
    :func:`test_every_pmask_command_shown_runs`, but for those under torchrun and srun) or found where it runs."""
    from pmask.cli.dispatch import build_parser

    parser = build_parser()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    # .ci/run reads the README's set-up block and runs it as written (eval "$README_INSTALL", "$README_TEST")
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Set-up\n", 1)[1]
    setup = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert all(f'eval "$README_{name}"' in "\n".join(ci) for name in ("INSTALL", "TEST"))
    checked = 0
    for page, command in shown_commands():
        where = f"{page}: {command}"
        command = re.split(r"\s+#\s", command, maxsplit=1)[0].strip()   # a trailing comment
        args, words = _pmask_args(command), shlex.split(command)
        if args is not None:
            try:
                parser.parse_args(args)
            except SystemExit:
                pytest.fail(f"pmask's parser refuses a command the docs show ({where}):\n{capsys.readouterr().err}")
        elif re.fullmatch(r"[A-Z]+=\S+", command):
            continue   # a shell variable for the next commands
        elif words[:2] == ["python", "-c"]:
            compile(words[2], where, "exec")
        elif words[0] == "python" and words[1].startswith("benchmarks/"):
            _script_flags_exist(words[1:])
        elif words[0].startswith("tools/"):
            _script_flags_exist(words)
        elif words[:3] in (["python", "-m", "pytest"], ["python", "-m", "pip"]) or words[0] == "mkdocs":
            assert command in setup or any(line.startswith((command, f"NO_MKDOCS_2_WARNING=1 {command}"))
                       or command.replace('".[test]"', '".[test,lint,release,docs]"') in line
                       or command.replace('".[docs]"', '".[test,lint,release,docs]"') in line
                       for line in ci), f".ci/run does not run {where}"
        else:
            pytest.fail(f"a command the tests neither run nor check: {where}")
        checked += 1
    assert checked > 60


def _slug(heading: str) -> str:
    """The anchor MkDocs (and GitHub) give a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")


def test_pages_are_in_the_navigation_and_links_resolve():
    docs = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(nav_pages()) == docs, "mkdocs.yml's nav lacks a page of docs/ (or names a missing one)"
    broken = []
    for page in pages():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and path.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"),
                                                            flags=re.S), flags=re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_faithful_table_and_sentence_name_every_authors_pipeline():
    """Every probe and metric with an authors' pipeline (its registry entry) is a row of the site's faithful table,
    with its authors and decoders, and is named where the docs say what --faithful runs; the probes
    without one are named as refused (issue 39.13: the README said --faithful was pair's alone)."""
    from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES

    text = "\n".join(page.read_text(encoding="utf-8") for page in pages())
    rows = {m[1]: m[0] for m in re.finditer(r"^\| (?:probe|metric) `([\w-]+)` \|.*$", text, flags=re.M)}
    pipelines = {**{n: e.faithful for n, e in PROBE_ENTRIES.items() if e.faithful},
                 **{n: e.faithful for n, e in METRIC_ENTRIES.items() if e.faithful}}
    assert set(rows) == set(pipelines)
    for name, pipeline in pipelines.items():
        assert pipeline is not None and pipeline.authors in rows[name]
        assert all(f"`{decoder}`" in rows[name] for decoder in pipeline.decoders)
    sentence = re.search(r"`--faithful` runs the authors'\s+pipeline of (.*?);", text, flags=re.S)[1]
    assert all(f"`{name}`" in sentence for name in pipelines)
    refused = [n for n, e in PROBE_ENTRIES.items() if not e.faithful]
    assert re.search(r"refused for the probes without one \(" + r",\s+".join(f"`{n}`" for n in refused) + r"\)", text)


# ---------------------------------------------------------------------------- every pmask command shown, run

#: Hub models the docs name: each is replaced by a tiny random BERT of the same depth and width in heads
#: (12 layers, 12 heads: ``--layer 8 --head 10`` still name one). The bundled pmask-tiny-en runs as itself.
HUB_MODELS = {"bert-base-uncased", "bert-base-multilingual-cased", "M"}
#: GGUF files the docs name: each is replaced by a tiny random Llama written as a GGUF file.
GGUF_MODELS = {"SmolLM2-135M-Instruct.Q4_1.gguf"}
#: Commands that cannot run in a test process, with the reason; they are still parsed (the test above).
NOT_RUN = {
    "torchrun": "starts several processes (and, in the examples, several nodes or GPUs)",
    "srun": "a SLURM job step over two nodes",
}
#: What a few commands print or write (beyond exit code 0 and no traceback): (command start, file or None, text).
EXPECT = [
    ("pmask eval pud.conllu --gold", None, "| eisner ("),
    ("pmask eval pud.conllu --gold", None, "UAS"),
    ("pmask eval wsj10.txt --gold ptb/combined", "wsj10.json", '"f1'),
    ("pmask eval pred --gold", None, "connect-adjacent"),
    ("pmask eval cpmi.conllu", None, "Hoover UUAS"),
    ("pmask heatmap pud-store/ --sentence n01001011 --gold", "n01001011.png", "PNG"),
    ("pmask report pud.conllu --gold en_pud-ud-test.conllu --store pud-store/ -o", "report.html", "n01001011"),
    ("pmask report pud.conllu --gold en_pud-ud-test.conllu --store pud-store/ --bench", "report-bench.html", "en_pud"),
    ("pmask bench ../shared/data/ud/UD_*-PUD/*.conllu --model bert-base-multilingual-cased --layers all",
     "mbert-pud/results.json", "en_pud"),
]


def _pud_fixture(copies: int) -> str:
    """tests/data/mini.conllu ``copies`` times with unique sentence ids, the first named as PUD's first
    (n01001011, which the heatmap examples name)."""
    text = (ROOT / "tests" / "data" / "mini.conllu").read_text(encoding="utf-8")
    out = "".join(re.sub(r"# sent_id = (\S+)", rf"# sent_id = \g<1>-{k}", text) for k in range(copies))
    return out.replace("# sent_id = s1-0", "# sent_id = n01001011", 1)


def _data(tmp_path: Path) -> Path:
    """The working directory of the docs' commands: the files they name, small (tests/data), and
    ``../shared/data`` beside it holding the treebanks at the paths the docs give them."""
    data, work = ROOT / "tests" / "data", tmp_path / "work"
    shared = tmp_path / "shared" / "data"
    files = {work / "en_pud-ud-test.conllu": _pud_fixture(2), work / "PUD.conllu": _pud_fixture(2),
             shared / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu": _pud_fixture(1),
             shared / "ud" / "PUD-wu2020" / "PUD.conllu": _pud_fixture(1),
             work / "my.edus": (data / "docs.edus").read_text(encoding="utf-8")}
    for folder in (work / "ptb" / "combined", shared / "ptb-sample" / "combined"):
        files[folder / "wsj_0001.mrg"] = (data / "mini.mrg").read_text(encoding="utf-8")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    shutil.copytree(data / "scidtb", shared / "scidtb" / "test" / "gold")
    (work / "tests").mkdir()
    (work / "tests" / "data").symlink_to(data)
    return work


def _tiny_gguf(tmp_path: Path, monkeypatch) -> Path:
    """A tiny random Llama as a GGUF file (its de-quantised copy cached under ``tmp_path``)."""
    from pmask.perturb.testing.gguf_writer import write_gguf
    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    monkeypatch.setenv("PMASK_CACHE", str(tmp_path / "cache"))
    return write_gguf(make_tiny_llm("llama-bbpe", tmp_path / "tiny-llama"), tmp_path / "tiny-llama.gguf")


def _substituted(args: list[str], model: Path, gguf: Path | None = None) -> list[str]:
    """A docs command's arguments as the test runs them: hub models replaced by ``model`` (GGUF files by
    ``gguf``), globs expanded (as the shell would, in the working directory), sentence ranges cut to the
    fixtures' first four."""
    out: list[str] = []
    for k, word in enumerate(args):
        before = args[k - 1] if k else ""
        if before == "--model" and word.removeprefix("random:") in HUB_MODELS:
            word = word.replace(word.removeprefix("random:"), str(model))
        elif before == "--model" and word.removeprefix("random:") in GGUF_MODELS and gguf is not None:
            word = word.replace(word.removeprefix("random:"), str(gguf))
        elif before == "--model":
            assert word.removeprefix("random:") == "pmask-tiny-en", f"a model the test does not know: {word}"
        if before == "--sentence" and re.fullmatch(r"\d+-\d+", word):
            word = f"{word.split('-')[0]}-{min(int(word.split('-')[1]), 3)}"
        if any(c in word for c in "*?["):
            found = sorted(glob.glob(word))
            assert found, f"{word} matches nothing in the fixtures"
            out += found
            continue
        out.append(word)
    return out


def _runnable() -> tuple[list[tuple[str, str]], list[str]]:
    """(page, command) of every ``pmask`` command shown, in page order (shell variables substituted), and
    the commands not run (:data:`NOT_RUN`)."""
    variables: dict[str, str] = {}
    commands, skipped = [], []
    for page, line in shown_commands():
        command = " ".join(re.split(r"\s+#\s", line, maxsplit=1)[0].split())   # runs of spaces from continuations
        if assignment := re.fullmatch(r"([A-Z]+)=(\S+)", command):
            variables[assignment[1]] = assignment[2]
            continue
        for name, value in variables.items():
            command = command.replace(f"${name}", value)
        if _pmask_args(command) is None:
            continue
        if any(word in NOT_RUN for word in shlex.split(re.sub(r"\$\(.*?\)", "HOST", command))):
            skipped.append(command)
            continue
        commands.append((page, command))
    return commands, skipped


def test_every_pmask_command_shown_runs(tmp_path, monkeypatch, capsys):
    """Issue 39 item 18: each ``pmask`` command of the README and the site runs (exit 0, no traceback), in
    page order in one working directory (a command reads what an earlier one wrote), with a tiny random
    model for the hub models and the fixtures of :func:`_data`; a few outputs are checked (:data:`EXPECT`)."""
    import torch

    from pmask.cli import main
    from pmask.perturb.testing import make_tiny_bert

    torch.set_num_threads(1)
    model = make_tiny_bert(tmp_path / "tiny-12", layers=12, heads=12, hidden=24)
    gguf = _tiny_gguf(tmp_path, monkeypatch)
    monkeypatch.chdir(_data(tmp_path))
    commands, skipped = _runnable()
    assert len(commands) >= 55 and len(skipped) == 4, skipped   # 59 pmask commands shown: 4 launch several processes
    printed: dict[str, str] = {}
    for page, command in commands:
        code = main(_substituted(_pmask_args(command) or [], model, gguf))
        out, err = capsys.readouterr()
        assert code == 0 and "Traceback" not in err, f"{page}: {command}\n{err}"
        printed[command] = out
    for start, path, text in EXPECT:
        ran = [c for c in printed if c.startswith(start)]
        assert ran, f"no command shown starts with {start}"
        shown = Path(path).read_bytes().decode("latin-1") if path else printed[ran[0]]
        assert text in shown, f"{start}: {text!r} not in {path or 'its output'}"
