#!/usr/bin/env bash
# Reproduces models/kjv/ from scratch: installs the King James Bible
# (Debian's bible-kjv-text) when missing, splits it (scripts/model/kjv-corpus.mjs),
# trains the byte-pair tokenizer, encodes both parts, computes the bigram
# baseline, builds attnscope_train and trains the model, then draws the loss
# curve. Intermediate files go to build/kjv/.
#
# The settings below are the committed model's; override any of them from
# the environment, e.g. STEPS=200 OUT=build/kjv/try bash scripts/train-model.sh
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-models/kjv}
WORK=${WORK:-build/kjv}
VOCAB=${VOCAB:-4096}
LAYERS=${LAYERS:-4}
HEADS=${HEADS:-4}
D_MODEL=${D_MODEL:-128}
CONTEXT=${CONTEXT:-128}
BATCH=${BATCH:-8}
STEPS=${STEPS:-2000}
WARMUP=${WARMUP:-50}
LR=${LR:-5e-3}
SEED=${SEED:-1}
mkdir -p "$OUT" "$WORK"

if ! command -v bible >/dev/null; then
  echo "train-model: installing bible-kjv-text"
  SUDO=""; [[ $(id -u) == 0 ]] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends bible-kjv-text >/dev/null
fi

bible -f gen1:1-rev22:21 >"$WORK/kjv.txt"
node scripts/model/kjv-corpus.mjs "$WORK/kjv.txt" "$WORK/train.txt" "$WORK/heldout.txt"
node scripts/model/train-bpe.mjs "$WORK/train.txt" "$VOCAB" "$OUT/tokenizer.json"
node scripts/model/tokenize.mjs "$OUT/tokenizer.json" "$WORK/train.txt" "$WORK/train.u16"
node scripts/model/tokenize.mjs "$OUT/tokenizer.json" "$WORK/heldout.txt" "$WORK/heldout.u16"
node scripts/model/bigram-baseline.mjs "$WORK/train.u16" "$WORK/heldout.u16" "$VOCAB" "$CONTEXT" \
  "$OUT/bigram.json"

cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j2 --target attnscope_train >/dev/null
build/native/cpp/tools/attnscope_train --train "$WORK/train.u16" --heldout "$WORK/heldout.u16" \
  --out "$OUT/model.safetensors" --loss-csv "$OUT/loss.csv" --vocab "$VOCAB" --layers "$LAYERS" \
  --heads "$HEADS" --d-model "$D_MODEL" --context "$CONTEXT" --batch "$BATCH" --steps "$STEPS" \
  --warmup "$WARMUP" --lr "$LR" --seed "$SEED" | tee "$OUT/train.log"

node scripts/model/plot-loss.mjs "$OUT/loss.csv" "$OUT/bigram.json" "$OUT/loss.svg"
echo "train-model: wrote $OUT"
