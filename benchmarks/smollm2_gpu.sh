#!/usr/bin/env bash
# Issue 45 on a CUDA machine with no internet, run from the repository root, pmask NOT installed (PYTHONPATH).
#
# SmolLM2-135M's weights cannot travel to that machine: the transfer holds 64 MiB, the Q4_1 GGUF is 98,362,432
# bytes (93.8 MiB; 92.8 MB after zstd -3) and its de-quantised float32 weights 538 MB. So this script runs what
# needs no weights:
#   1. the causal-family test files (on the machine's CPU: the tests choose their device),
#   2. pmask's causal readings on CUDA against the same on CPU, on a tiny random Llama written as a GGUF file:
#      the scores of every layer must be equal (trees the same) on both devices,
#   3. SmolLM2-135M's random twin (its own config and tokenizer, random weights; pmask's `random:`) on all 1000
#      PUD sentences, every layer, on CUDA: the random-twin rows of docs/llms.md's table for 1000 sentences.
# Every step is bounded so that the whole run ends within about 7.5 minutes; results go under $OUT.
#
# Prepare on a machine that has run benchmarks/smollm2.py or pmask on the GGUF once (any CPU machine):
#     bash benchmarks/smollm2_gpu.sh prepare      # writes out-smollm2-gpu/ (about 4.8 MiB): carry that path
# then on the CUDA machine (carry: ["out-smollm2-gpu"]):
#     bash benchmarks/smollm2_gpu.sh
set -u
CARRY=out-smollm2-gpu
if [ "${1:-}" = prepare ]; then
    cache=$(ls -d "${PMASK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pmask}"/gguf/SmolLM2-135M-Instruct.Q4_1-*/ 2>/dev/null | head -1)
    [ -n "$cache" ] || { echo "no de-quantised SmolLM2 in pmask's GGUF cache: run pmask once on the GGUF file" >&2; exit 1; }
    mkdir -p "$CARRY/smollm2-config"
    cp "$cache"/config.json "$cache"/tokenizer.json "$cache"/tokenizer_config.json "$CARRY/smollm2-config/"
    cp "$cache"/chat_template.jinja "$CARRY/smollm2-config/" 2>/dev/null
    cp ../shared/data/ud/UD_English-PUD/en_pud-ud-test.conllu "$CARRY/" || exit 1
    du -sh "$CARRY"
    exit 0
fi
[ -d "$CARRY/smollm2-config" ] || { echo "$CARRY/ is missing: run 'bash benchmarks/smollm2_gpu.sh prepare' and carry it" >&2; exit 1; }
OUT=${OUT:-$PWD/out-smollm2-gpu-results}
mkdir -p "$OUT"
START=$(date +%s)
left() { echo $(( 450 - ($(date +%s) - START) )); }     # seconds left of 7.5 minutes
# pmask without installing it: the repository root is the package, so import it by a link named pmask
LINK=$(mktemp -d)
ln -s "$PWD" "$LINK/pmask"
export PYTHONPATH="$LINK${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PMASK_CACHE="$OUT/cache"
PY=${PYTHON:-python}
$PY -c "import torch, transformers, pmask; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else '', 'transformers', transformers.__version__,
'pmask from', pmask.__file__)" 2>&1 | tee "$OUT/versions.txt"
nvidia-smi --query-gpu=name,memory.total --format=csv >> "$OUT/versions.txt" 2>&1

echo "== 1. causal-family tests" | tee -a "$OUT/summary.txt"
timeout 150 $PY -m pytest -q -x -p no:cacheprovider tests/perturb/encoders/test_causal.py \
    tests/perturb/probes/test_cpmi_causal.py tests/perturb/models/test_gguf.py > "$OUT/tests.txt" 2>&1
echo "exit $? (124: cut at 150 s); $(tail -1 "$OUT/tests.txt")" | tee -a "$OUT/summary.txt"

echo "== 2. CUDA against CPU, tiny random Llama as GGUF" | tee -a "$OUT/summary.txt"
$PY - "$OUT" <<'EOF' >> "$OUT/summary.txt" 2>&1
import sys
from pathlib import Path
from pmask.perturb.testing.gguf_writer import write_gguf
from pmask.perturb.testing.llm_zoo import make_tiny_llm
out = Path(sys.argv[1])
print(write_gguf(make_tiny_llm("llama-bbpe", out / "tiny-llama"), out / "tiny-llama.gguf"))
EOF
for reading in "--metric cpmi --subword sum --layers -1" "--probes single --layers all" \
               "--probes attention --tokenize echo-prompt --layers all"; do
    tag=$(echo "$reading" | tr -c 'a-z\n' '_')
    for device in cuda cpu; do
        timeout 120 $PY -m pmask sweep tests/data/mini.conllu --model "$OUT/tiny-llama.gguf" $reading \
            --decoder mst --symmetrize sum --device $device --dtype float32 --json "$OUT/tiny-$tag-$device.json" -q \
            > /dev/null 2>> "$OUT/tiny.err"
    done
    $PY - "$OUT/tiny-$tag-cuda.json" "$OUT/tiny-$tag-cpu.json" "$reading" <<'EOF' >> "$OUT/summary.txt" 2>&1
import json, sys
a, b = (json.load(open(p))["rows"] for p in sys.argv[1:3])
same = [x["uuas"] == y["uuas"] for x, y in zip(a, b)]
print(f"{sys.argv[3]}: {sum(same)}/{len(same)} layers score the same on CUDA and CPU")
EOF
done

echo "== 3. SmolLM2-135M's random twin, 1000 PUD sentences, CUDA" | tee -a "$OUT/summary.txt"
for reading in "echo-prompt:--probes attention --tokenize echo-prompt --layers all" \
               "cpmi:--metric cpmi --subword sum --layers -1" "echo:--probes attention --tokenize echo --layers all" \
               "single:--probes single --layers all"; do
    name=${reading%%:*}
    budget=$(left)
    [ "$budget" -gt 30 ] || { echo "$name: no time left" | tee -a "$OUT/summary.txt"; continue; }
    t0=$(date +%s)
    timeout "$budget" $PY -m pmask sweep "$CARRY/en_pud-ud-test.conllu" --model "random:$CARRY/smollm2-config" \
        ${reading#*:} --decoder mst --symmetrize sum --score hoover_uuas --baselines --device cuda --dtype float32 \
        --json "$OUT/random-$name-1000.json" -q > "$OUT/random-$name-1000.md" 2> "$OUT/random-$name-1000.err"
    code=$?
    $PY - "$OUT/random-$name-1000.json" "$name" "$code" "$(( $(date +%s) - t0 ))" <<'EOF' >> "$OUT/summary.txt" 2>&1
import json, sys
path, name, code, seconds = sys.argv[1:]
try:
    d = json.load(open(path))
except OSError:
    sys.exit(print(f"{name}: exit {code}, no result ({seconds} s)"))
row = max(d["rows"], key=lambda r: r["hoover_uuas"])
chain = next(b for b in d["baselines"] if b["name"] == "connect-adjacent")
print(f"{name} (random twin): best layer {row['layer']} Hoover UUAS {row['hoover_uuas']:.2f} UUAS {row['uuas']:.2f}; "
      f"connect-adjacent {chain['hoover_uuas']:.2f} / {chain['uuas']:.2f}; {seconds} s")
EOF
done
rm -rf "$LINK" "$OUT/cache" "$OUT/tiny-llama"
cat "$OUT/summary.txt"
