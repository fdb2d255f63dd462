#!/bin/sh
# Fuzz for MINUTES minutes in total (default 10), restarting after each finding; findings in $OUT.
# Usage: fuzz/run.sh [MINUTES] [OUT]   (from the repository root; nice it on a shared machine)
set -u
MINUTES=${1:-10}
OUT=${2:-fuzz/findings}
CORPUS=${CORPUS:-fuzz/corpus}
mkdir -p "$OUT" "$CORPUS"
[ -n "$(ls -A "$CORPUS")" ] || python fuzz/fuzz_dialects.py --make-corpus "$CORPUS"
end=$(( $(date +%s) + MINUTES * 60 ))
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  python fuzz/fuzz_dialects.py "$CORPUS" -max_total_time="$left" -timeout=30 -rss_limit_mb=2048 \
    -artifact_prefix="$OUT/" -print_final_stats=1 >>"$OUT/log.txt" 2>&1
  rc=$?
  echo "exit $rc at $(date)" >>"$OUT/log.txt"
  [ $rc -eq 0 ] && break
done
ls "$OUT"
