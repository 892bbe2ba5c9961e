#!/usr/bin/env bash
# Instructions per call of each variant, counted by callgrind: repeatable on a noisy machine.
#
#   benches/instructions.sh [VARIANT...]        (default: every variant; see `instructions list`)
#
# Each variant runs M1 and M2 calls under `valgrind --tool=callgrind`; instructions per call =
# (total(M2) - total(M1)) / (M2 - M1), so start-up and set-up cancel out. Needs valgrind.
# CALLGRIND_KEEP=DIR keeps the M2 profiles (DIR/VARIANT.out) for `callgrind_annotate`.
set -euo pipefail
cd "$(dirname "$0")"

M1=${M1:-1000}
M2=${M2:-11000}

# Rig's variants (`f*`) from a build of their own with the `rig` feature: Rig changes the
# build of hookchain it shares (see Cargo.toml), so every other variant is measured without it.
target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet --features rig --bin instructions
cp "$target/release/instructions" "$target/release/instructions-rig"
cargo build --release --quiet --bin instructions
bin=$target/release/instructions

if [ $# -eq 0 ]; then
    mapfile -t variants < <("$bin" list | awk '{print $1}')
else
    variants=("$@")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

total() { # VARIANT M OUT
    local exe=$bin
    if [[ $1 == f* ]]; then exe=$target/release/instructions-rig; fi
    valgrind --tool=callgrind --callgrind-out-file="$3" "$exe" "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '| variant | instructions per call | what |\n|---|---:|---|\n'
for variant in "${variants[@]}"; do
    what=$("$bin" list | awk -v v="$variant" '$1 == v { $1 = ""; sub(/^ /, ""); print }')
    m1=$(total "$variant" "$M1" "$tmp/$variant.m1.out")
    m2=$(total "$variant" "$M2" "$tmp/$variant.out")
    if [ -n "${CALLGRIND_KEEP:-}" ]; then
        mkdir -p "$CALLGRIND_KEEP"
        cp "$tmp/$variant.out" "$CALLGRIND_KEEP/$variant.out"
    fi
    per_call=$(( (m2 - m1) / (M2 - M1) ))
    printf '| %s | %d | %s |\n' "$variant" "$per_call" "$what"
done
