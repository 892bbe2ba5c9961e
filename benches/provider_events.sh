#!/usr/bin/env bash
# Instructions per event of a streamed OpenAI-compatible answer, counted by callgrind (see
# src/bin/provider_events.rs):
#
#   benches/provider_events.sh [VARIANT...]      (default: every variant)
#
# Each variant streams M1 and M2 events; instructions per event =
# (total(M2) - total(M1)) / (M2 - M1). The event counts depend on the event's size (env
# SMALL="M1 M2", BIG="M1 M2" for 64k, HUGE="M1 M2" for 1m). Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")"

cargo build --release --quiet --bin provider_events
bin=${CARGO_TARGET_DIR:-target}/release/provider_events

if [ $# -eq 0 ]; then
    mapfile -t variants < <("$bin" list | awk '{print $1}')
else
    variants=("$@")
fi

counts() {
    case "$1" in
        paced | small) echo "${SMALL:-1000 11000}" ;;
        64k) echo "${BIG:-20 120}" ;;
        *) echo "${HUGE:-2 12}" ;;
    esac
}

total() { # VARIANT M
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '| variant | instructions per event | what |\n|---|---:|---|\n'
for variant in "${variants[@]}"; do
    what=$("$bin" list | awk -v v="$variant" '$1 == v { $1 = ""; sub(/^ /, ""); print }')
    read -r m1 m2 < <(counts "$variant")
    t1=$(total "$variant" "$m1")
    t2=$(total "$variant" "$m2")
    printf '| %s | %d | %s |\n' "$variant" $(( (t2 - t1) / (m2 - m1) )) "$what"
done
