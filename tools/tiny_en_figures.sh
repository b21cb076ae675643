#!/usr/bin/env bash
# Every figure that the documentation (docs/) and the model card show for the bundled pmask-tiny-en, made
# again from the installed package and the shared data (../shared/data), on the CPU:
#   tools/tiny_en_figures.sh OUT          # OUT: a new folder for stores, predictions, tables
# Writes docs/report.png, docs/bench-tiny-en.png and docs/notebook.png in the repository and
# prints each command before its output; OUT/figures.log keeps all of it.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")"); REPO=$(realpath "$HERE/..")
OUT=$(realpath -m "$1"); mkdir -p "$OUT"; cd "$OUT"
export HF_HUB_OFFLINE=1 PYTHONHASHSEED=0
DATA=$(realpath "${PMASK_DATA:-$REPO/../shared/data}")
PUD=$DATA/ud/UD_English-PUD/en_pud-ud-test.conllu
PTB=$DATA/ptb-sample/combined
run() { echo; echo "\$ $*"; local t0=$SECONDS; "$@"; echo "($((SECONDS - t0)) s)"; }
{
# the README's main job, from the repository's root
(cd "$REPO" && run pmask parse tests/data/mini.conllu -o "$OUT/mini-pred.conllu" \
  && run pmask eval "$OUT/mini-pred.conllu" --gold tests/data/mini.conllu --baselines)

# bench: UD English PUD (all 1000 sentences; dependencies: Eisner and CLE, gold root, every layer)
# and the PTB sample under the WSJ10 filter (constituents: MART), the model's defaults (pair probe,
# prob), and the WSJ10 study again with the random twin
run pmask bench "$PUD" -o bench-pud
cp bench-pud/layers.png "$REPO/docs/bench-tiny-en.png"
run pmask bench "$PTB" --max-words 10 -o bench-wsj10
run pmask bench "$PTB" --max-words 10 --model random:pmask-tiny-en -o bench-wsj10-twin

# the main job on all of PUD from bench's store (no model pass), free root too, and the report
STORE=bench-pud/stores/en_pud-ud-test
run pmask parse $STORE -o pud.conllu
run pmask eval pud.conllu --gold "$PUD" --baselines --json pud-eval.json
run pmask parse $STORE --root free -o pud-free.conllu
run pmask eval pud-free.conllu --gold "$PUD" --baselines
run pmask report pud.conllu --gold "$PUD" --store $STORE --bench bench-pud -o pud-report.html
run python "$REPO/benchmarks/report_load.py" pud-report.html --repeat 1 --sentence n01002042 \
  --screenshot "$REPO/docs/report.png"

# the notebook's screenshot
(cd "$REPO" && run env PMASK_NOTEBOOK_SCREENSHOT=docs/notebook.png python -m pytest -q tests/test_notebook.py)
} 2>&1 | tee "$OUT/figures.log"
