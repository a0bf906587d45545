#!/usr/bin/env bash
# Each file of Tests/CompileFailures must fail to type-check against the debug build's Stimpak module, with the
# message its first line names. Run after `swift build`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
modules=.build/debug/Modules
check() {
  local file=$1 expected=$2 output
  if output=$(swiftc -typecheck -swift-version 6 -I "$modules" \
    -Xcc -fmodule-map-file=.build/debug/CStimpakAtomics.build/module.modulemap "$file" 2>&1); then
    echo "$file compiled; it must not" >&2
    exit 1
  fi
  if ! grep -qF "$expected" <<<"$output"; then
    echo "$file failed without \"$expected\":" >&2
    echo "$output" >&2
    exit 1
  fi
  echo "$file: rejected ($expected)"
}
check Tests/CompileFailures/TopLevelDispose.swift "instance method 'dispose' is unavailable from asynchronous contexts"
check Tests/CompileFailures/TopLevelScopeDispose.swift "instance method 'dispose' is unavailable from asynchronous contexts"
check Tests/CompileFailures/ScopeDisposeInDefer.swift "instance method 'dispose' is unavailable from asynchronous contexts"
check Tests/CompileFailures/TopLevelDisposeScope.swift "instance method 'disposeScope' is unavailable from asynchronous contexts"
