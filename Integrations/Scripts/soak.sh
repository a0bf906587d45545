#!/usr/bin/env bash
# Soak: an integration's example with Stimpak (a request scope per request, an async .inScope session that is
# AsyncDisposable, a provided request value, a singleton pool) under wrk on 127.0.0.1 only until it has served
# REQUESTS requests (10 million unless told), in release. Prints the resident memory after each slice of
# SLICE_SECONDS of load, and at the end the growth over the soak's second half (after the allocator and the
# caches have warmed up), the open scopes and the sessions opened but not closed. Fails when a response is not
# a 2xx, when a scope is left open or a session unclosed, or when the resident memory grew by more than
# MAX_GROWTH_KB (4 MB unless told) over the second half.
#
#   Integrations/Scripts/soak.sh                        # Hummingbird, 10,000,000 requests of GET /orders
#   Integrations/Scripts/soak.sh vapor                  # the Vapor example, the same way
#   REQUESTS=1000000 ROUTE=/users/7 Integrations/Scripts/soak.sh
set -euo pipefail
case "${1:-hummingbird}" in
hummingbird) package=StimpakHummingbird product=stimpak-hummingbird-example ;;
vapor) package=StimpakVapor product=stimpak-vapor-example ;;
*) echo "usage: $0 [hummingbird|vapor]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../$package"
export PATH="/opt/swift/usr/bin:$PATH"
requests=${REQUESTS:-10000000}
slice=${SLICE_SECONDS:-30}
connections=${CONNECTIONS:-64}
threads=${WRK_THREADS:-2}
route=${ROUTE:-/orders}
port=${PORT:-18082}
max_growth=${MAX_GROWTH_KB:-4096}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

echo "== release build"
swift build -c release --product "$product" >/dev/null
bin=$(swift build -c release --show-bin-path)

LOG_LEVEL=warning PORT=$port "$bin/$product" & pid=$!
trap 'kill -INT "$pid" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/stats" >/dev/null && break; sleep 0.1; done

rss() { awk '/VmRSS/ { print $2 }' "/proc/$pid/status"; }  # kB
echo "== $package: $requests requests of GET $route, $connections connections, slices of $slice s"
printf "%12s %12s %10s\n" requests "RSS kB" "req/s"
served=0
samples=()
while ((served < requests)); do
  out=$(wrk -t"$threads" -c"$connections" -d"${slice}s" "http://127.0.0.1:$port$route")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx responses:" >&2; echo "$out" >&2; exit 1; fi
  served=$((served + $(awk '/requests in/ { print $1 }' <<<"$out")))
  now=$(rss)
  samples+=("$served $now")
  printf "%12d %12d %10s\n" "$served" "$now" "$(awk '/Requests\/sec/ { print $2 }' <<<"$out")"
done
sleep 0.5  # the last requests' scopes are disposed once their responses are written
stats=$(curl -sf "http://127.0.0.1:$port/stats")

# The growth over the second half: from the first sample at or past half the requests to the last.
read -r half_served half_rss < <(printf "%s\n" "${samples[@]}" | awk -v h=$((served / 2)) '$1 >= h { print; exit }')
last_rss=$(rss)
growth=$((last_rss - half_rss))
opened=$(sed -E 's/.*sessions_opened=([0-9]+).*/\1/' <<<"$stats")
closed=$(sed -E 's/.*sessions_closed=([0-9]+).*/\1/' <<<"$stats")
open_scopes=$(sed -E 's/.*open_scopes=([0-9]+).*/\1/' <<<"$stats")
echo
echo "== results ($(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ))"
echo "served:       $served requests"
echo "RSS:          first slice ${samples[0]#* } kB, at $half_served requests $half_rss kB, at the end $last_rss kB:" \
  "$growth kB over the second half"
echo "after run:    open scopes $open_scopes; sessions opened $opened, closed $closed, undisposed $((opened - closed))"
status=0
if ((open_scopes != 0 || opened != closed)); then echo "FAIL: a scope left open or a session undisposed" >&2; status=1; fi
if ((growth > max_growth)); then echo "FAIL: RSS grew by $growth kB over the second half (limit $max_growth kB)" >&2; status=1; fi
exit $status
