# Timing helpers, sourced by compile_time.sh and compile_vs_rig.sh (which set `$work`).

# seconds COMMAND...: wall time of COMMAND, in seconds with two decimals; its output goes to
# $work/last.log; fails if it fails.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" > "$work/last.log" 2>&1 || return 1
    end=$(date +%s.%N)
    echo "$start $end" | awk '{printf "%.2f", $2 - $1}'
}

# median: the median of the numbers on standard input (separated by spaces or newlines).
median() {
    tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
