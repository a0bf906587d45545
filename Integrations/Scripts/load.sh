#!/usr/bin/env bash
# Load: an integration's example with Stimpak (a request scope per request, an async .inScope session that is
# AsyncDisposable, a provided request value, a singleton pool) against the same handlers without a container,
# both in release, under wrk on 127.0.0.1 only, in interleaved rounds of bounded length. Prints the median
# throughput ratio, the added microseconds per request (wall, and server CPU), the p99 latency of each, the
# resident memory before and after, and the open scopes and unclosed sessions after the run.
#
#   Integrations/Scripts/load.sh            # Hummingbird: 5 rounds of 10 s each, 64 connections, GET /orders
#   Integrations/Scripts/load.sh vapor      # the Vapor pair, the same way
#   ROUNDS=3 SECONDS_PER_ROUND=5 CONNECTIONS=32 ROUTE=/users/7 Integrations/Scripts/load.sh
set -euo pipefail
case "${1:-hummingbird}" in
hummingbird) package=StimpakHummingbird stimpak_product=stimpak-hummingbird-example hand_product=hand-written-example ;;
vapor) package=StimpakVapor stimpak_product=stimpak-vapor-example hand_product=vapor-hand-written-example ;;
*) echo "usage: $0 [hummingbird|vapor]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../$package"
export PATH="/opt/swift/usr/bin:$PATH"
rounds=${ROUNDS:-5}
seconds=${SECONDS_PER_ROUND:-10}
connections=${CONNECTIONS:-64}
threads=${WRK_THREADS:-2}
route=${ROUTE:-/orders}
stimpak_port=${STIMPAK_PORT:-18080}
hand_port=${HAND_PORT:-18081}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

echo "== release build"
swift build -c release --product "$stimpak_product" >/dev/null
swift build -c release --product "$hand_product" >/dev/null
bin=$(swift build -c release --show-bin-path)

pids=()
stop() { for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
LOG_LEVEL=warning PORT=$stimpak_port "$bin/$stimpak_product" & stimpak_pid=$!
pids+=("$stimpak_pid")
LOG_LEVEL=warning PORT=$hand_port "$bin/$hand_product" & hand_pid=$!
pids+=("$hand_pid")
for port in "$stimpak_port" "$hand_port"; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/stats" >/dev/null && break; sleep 0.1; done
done

rss() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }    # kB
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # user + system, in clock ticks
ticks_per_second=$(getconf CLK_TCK)
# The latency wrk prints (e.g. 812.00us, 4.10ms, 1.20s), in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; print n }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== warm-up (3 s each)"
wrk -t"$threads" -c"$connections" -d3s "http://127.0.0.1:$stimpak_port$route" >/dev/null
wrk -t"$threads" -c"$connections" -d3s "http://127.0.0.1:$hand_port$route" >/dev/null
stimpak_rss_before=$(rss "$stimpak_pid")
hand_rss_before=$(rss "$hand_pid")

declare -a s_rps h_rps s_p99 h_p99 s_cpu h_cpu ratios
run() {  # run NAME PORT PID: one round; prints "rps p99ms cpu_us_per_request"
  local port=$2 pid=$3 out before after requests
  before=$(cpu_ticks "$pid")
  out=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port$route")
  after=$(cpu_ticks "$pid")
  if grep -q "Non-2xx" <<<"$out"; then echo "$1: non-2xx responses" >&2; echo "$out" >&2; exit 1; fi
  requests=$(awk '/requests in/ { print $1 }' <<<"$out")
  echo "$(awk '/Requests\/sec/ { print $2 }' <<<"$out") $(to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$out")")" \
    "$(awk -v t=$((after - before)) -v hz="$ticks_per_second" -v n="$requests" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')"
}
echo "== $package: $rounds interleaved rounds of ${seconds} s, $connections connections, $threads wrk threads, GET $route"
printf "%-6s %14s %14s %8s %10s %10s\n" round "stimpak rps" "hand rps" ratio "p99 S ms" "p99 H ms"
for round in $(seq "$rounds"); do
  if (( round % 2 )); then
    read -r srps sp99 scpu < <(run stimpak "$stimpak_port" "$stimpak_pid")
    read -r hrps hp99 hcpu < <(run hand "$hand_port" "$hand_pid")
  else
    read -r hrps hp99 hcpu < <(run hand "$hand_port" "$hand_pid")
    read -r srps sp99 scpu < <(run stimpak "$stimpak_port" "$stimpak_pid")
  fi
  ratio=$(awk -v a="$srps" -v b="$hrps" 'BEGIN { printf "%.3f", a / b }')
  s_rps+=("$srps"); h_rps+=("$hrps"); s_p99+=("$sp99"); h_p99+=("$hp99"); s_cpu+=("$scpu"); h_cpu+=("$hcpu")
  ratios+=("$ratio")
  printf "%-6s %14s %14s %8s %10s %10s\n" "$round" "$srps" "$hrps" "$ratio" "$sp99" "$hp99"
done

stimpak_rss_after=$(rss "$stimpak_pid")
hand_rss_after=$(rss "$hand_pid")
sleep 0.5   # the last requests' scopes are disposed once their responses are written
stats=$(curl -sf "http://127.0.0.1:$stimpak_port/stats")
hand_stats=$(curl -sf "http://127.0.0.1:$hand_port/stats")

m() { printf "%s\n" "$@" | median; }
ms_rps=$(m "${s_rps[@]}"); mh_rps=$(m "${h_rps[@]}")
echo
echo "== results (medians of $rounds rounds; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ))"
echo "throughput:   stimpak $ms_rps req/s, hand-written $mh_rps req/s, ratio $(m "${ratios[@]}")x (median of the rounds' ratios)"
echo "added wall:   $(awk -v a="$ms_rps" -v b="$mh_rps" 'BEGIN { printf "%.2f", 1e6 / a - 1e6 / b }') µs per request (1/throughput)"
echo "server CPU:   stimpak $(m "${s_cpu[@]}") µs, hand-written $(m "${h_cpu[@]}") µs per request; added" \
  "$(awk -v a="$(m "${s_cpu[@]}")" -v b="$(m "${h_cpu[@]}")" 'BEGIN { printf "%.2f", a - b }') µs"
echo "p99 latency:  stimpak $(m "${s_p99[@]}") ms, hand-written $(m "${h_p99[@]}") ms"
echo "RSS:          stimpak ${stimpak_rss_before} kB -> ${stimpak_rss_after} kB, hand-written ${hand_rss_before} kB -> ${hand_rss_after} kB"
echo "after run:    stimpak: $stats"
echo "              hand-written: $hand_stats"
opened=$(sed -E 's/.*sessions_opened=([0-9]+).*/\1/' <<<"$stats")
closed=$(sed -E 's/.*sessions_closed=([0-9]+).*/\1/' <<<"$stats")
echo "              undisposed sessions: $((opened - closed)) of $opened; open scopes: $(sed -E 's/.*open_scopes=([0-9]+).*/\1/' <<<"$stats")"
