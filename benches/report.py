#!/usr/bin/env python3
"""Prints the tables of BENCHMARKS.md from the last criterion run (medians, ratios).

    cargo bench --manifest-path benches/Cargo.toml
    python3 benches/report.py            # reads benches/target/criterion

Criterion keeps each benchmark's estimates in
target/criterion/<group>/<function>/<parameter>/new/estimates.json.
"""

import json
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "target" / "criterion"
NS = [0, 1, 5, 10, 32]


def median(group, function, parameter):
    path = ROOT / group / function / str(parameter) / "new" / "estimates.json"
    try:
        return json.loads(path.read_text())["median"]["point_estimate"]
    except FileNotFoundError:
        return None


def fmt_ns(value):
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def ratio(a, b):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def model_call():
    variants = [
        ("a_absent", "(a) absent hooks"),
        ("b_active", "(b) active, `fn` hooks"),
        ("b_active_async", "(b) active, `async fn` hooks"),
        ("b_manual_impl", "(b) active, hand-written impl"),
        ("c_hand", "(c) by hand"),
        ("d_dyn", "(d) `Vec<Arc<dyn>>`"),
        ("e_synaptic", "(e) Synaptic, no-op"),
        ("e_synaptic_active", "(e) Synaptic, active"),
    ]
    data = {v: {n: median("model_call", v, n) for n in NS} for v, _ in variants}
    print("### Model call: median ns per call\n")
    print("| N | " + " | ".join(label for _, label in variants) + " |")
    print("|---:|" + "---:|" * len(variants))
    for n in NS:
        print(f"| {n} | " + " | ".join(fmt_ns(data[v][n]) for v, _ in variants) + " |")
    print("\n### Model call: ratios\n")
    print(
        "| N | (a) / (a) at N=0 | (b) / (c) | (b async) / (c) | (b impl) / (c) "
        "| (d) / (b) | (d) / (b async) | (e) / (b) | (e) / (b async) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in NS:
        a, b, ba, bm, c, d, e = (
            data[v][n]
            for v in ("a_absent", "b_active", "b_active_async", "b_manual_impl", "c_hand", "d_dyn", "e_synaptic")
        )
        print(
            f"| {n} | {ratio(a, data['a_absent'][0])} | {ratio(b, c)} | {ratio(ba, c)} | {ratio(bm, c)} "
            f"| {ratio(d, b)} | {ratio(d, ba)} | {ratio(e, b)} | {ratio(e, ba)} |"
        )
    print("\n### Model call: cost per member, (median(N=32) - median(N=0)) / 32, ns\n")
    print("| " + " | ".join(label for _, label in variants) + " |")
    print("|" + "---:|" * len(variants))
    per = []
    for v, _ in variants:
        lo, hi = data[v][0], data[v][32]
        per.append("–" if lo is None or hi is None else f"{(hi - lo) / 32:.1f}")
    print("| " + " | ".join(per) + " |")


def sequential():
    rows = [
        ("empty_chain", 0, "hookchain, empty chain"),
        ("hookchain_fn_hooks", 10, "hookchain, 10 `fn` hooks"),
        ("hookchain_async_hooks", 10, "hookchain, 10 `async fn` hooks"),
        ("inline", 10, "inline in one `async fn`"),
    ]
    inline = median("sequential", "inline", 10)
    print("\n### Sequential hooks: 10 `before_model` counter bumps + the model call\n")
    print("| variant | median ns | / inline |")
    print("|---|---:|---:|")
    for function, n, label in rows:
        m = median("sequential", function, n)
        print(f"| {label} | {fmt_ns(m)} | {ratio(m, inline)} |")


def agent_turn():
    rows = [
        ("hand_loop", 0, "the same turn by hand (no framework)"),
        ("agent", 0, "`Agent::run`, empty chain"),
        ("agent_absent", 10, "`Agent::run`, 10 absent-hook middleware"),
        ("agent", 10, "`Agent::run`, 10 active middleware"),
    ]
    hand = median("agent_turn", "hand_loop", 0)
    empty = median("agent_turn", "agent", 0)
    print("\n### Agent turn: 2 model calls + 1 tool call\n")
    print("| variant | median µs | − empty chain (µs) | − by hand (µs) |")
    print("|---|---:|---:|---:|")
    for function, n, label in rows:
        m = median("agent_turn", function, n)
        if m is None:
            print(f"| {label} | – | – | – |")
            continue
        d_empty = "–" if empty is None else f"{(m - empty) / 1000:+.2f}"
        d_hand = "–" if hand is None else f"{(m - hand) / 1000:+.2f}"
        print(f"| {label} | {m / 1000:.2f} | {d_empty} | {d_hand} |")


if __name__ == "__main__":
    if not ROOT.is_dir():
        sys.exit(f"no criterion results in {ROOT}: run `cargo bench --manifest-path benches/Cargo.toml` first")
    model_call()
    sequential()
    agent_turn()
