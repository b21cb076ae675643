#!/usr/bin/env bash
# Runs the main commands on UD English PUD with a tiny random model and writes every output
# under DIR, for a before/after diff of a refactoring:
#   PYTHONPATH=OLD_PARENT tools/outputs_snapshot.sh /tmp/before   # OLD_PARENT/pmask = old tree
#   tools/outputs_snapshot.sh /tmp/after && tools/outputs_snapshot.sh --diff /tmp/before /tmp/after
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
if [ "${1:-}" = "--diff" ]; then
  # timestamps, timings, versions and checksums of files holding them differ by nature
  diff -r -I '"seconds"' -I '"created"' -I '"date"' -I '"sha256"' -I '"elapsed' -I 'seconds' \
       -I '"pmask_version"' -I '"command"' -I '"wall' \
       -I '"updated"' -I '"started"' -I '"finished"' -I '[0-9] s\b' -I '[0-9]s\b' "$2" "$3" && echo "no difference"
  exit
fi
DEST=$(realpath -m "$1"); OUT=${TMPDIR:-/tmp}/pmask-outputs-snapshot   # one fixed place: paths are recorded
rm -rf "$OUT"; mkdir -p "$OUT"; cd "$OUT"
export HF_HUB_OFFLINE=1 PYTHONHASHSEED=0
DATA=$(realpath "${PMASK_DATA:-$HERE/../../shared/data}")
PUD=$DATA/ud/UD_English-PUD/en_pud-ud-test.conllu
JA=$DATA/ud/UD_Japanese-PUD/ja_pud-ud-test.conllu
python -c "from pmask.perturb.testing import make_tiny_bert; make_tiny_bert('tiny')"
P="python -m pmask"
$P impact "$PUD" --model tiny --layers all --limit 12 -o store -q
$P parse store -o parsed.conllu -q
$P parse "$PUD" --model tiny --limit 12 --decoder cle --root free -o parsed-cle.conllu -q
$P eval parsed.conllu --gold "$PUD" --baselines --json eval.json -q > eval.txt
$P sweep store --decoder eisner --json sweep.json --csv sweep.csv -q > sweep.txt
$P bench "$PUD" "$JA" --model tiny --limit 4 -o bench -q > bench.txt
$P report parsed.conllu --gold "$PUD" --store store -o report.html -q
python - <<'PY'
# the store's tensors as text, so that the diff compares numbers rather than shard bytes
import json, pathlib
from safetensors.numpy import load_file
for shard in sorted(pathlib.Path(".").rglob("*.safetensors")):
    arrays = load_file(str(shard))
    pathlib.Path(str(shard) + ".txt").write_text(
        "\n".join(f"{k} {a.shape} {a.dtype} {a.tobytes().hex()[:4000]}" for k, a in sorted(arrays.items())))
    shard.unlink()
PY
find . -name '*.png' -delete   # matplotlib embeds no timestamp, but fonts may differ across runs
rm -rf tiny
cd /; rm -rf "$DEST"; mv "$OUT" "$DEST"
