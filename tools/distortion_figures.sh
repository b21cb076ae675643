#!/usr/bin/env bash
# The constituency figures of docs/distortion.md and the model card for the bundled pmask-tiny-en: the PTB
# sample under the WSJ10 filter (555 sentences) and its first 200 sentences of every length, sentence
# F1 of every layer for contextual distortion + CKY (all perturbations, and each alone), MART and
# distance-split (pair and distance probes), next to right-branching, left-branching and random trees:
#   tools/distortion_figures.sh OUT          # OUT: a new folder for the bench studies and the log
set -euo pipefail
HERE=$(dirname "$(realpath "$0")"); REPO=$(realpath "$HERE/..")
OUT=$(realpath -m "$1"); mkdir -p "$OUT"; cd "$OUT"
export HF_HUB_OFFLINE=1 PYTHONHASHSEED=0
DATA=$(realpath "${PMASK_DATA:-$REPO/../shared/data}")
PTB=$DATA/ptb-sample/combined
PMASK=${PMASK:-pmask}
run() { echo; echo "\$ $*"; local t0=$SECONDS; "$@"; echo "($((SECONDS - t0)) s)"; }
{
for sel in wsj10 all200; do
  if [ $sel = wsj10 ]; then filter=(--max-words 10); else filter=(--limit 200); fi
  run $PMASK bench "$PTB" "${filter[@]}" --threads 1 --probes pair,distance,distortion \
    --decoders mart,distance-split,cky -o bench-$sel
  for m in sub dc move; do
    run $PMASK bench "$PTB" "${filter[@]}" --threads 1 --probes distortion --metric $m -o bench-$sel-$m
  done
done
} 2>&1 | tee "$OUT/figures.log"
