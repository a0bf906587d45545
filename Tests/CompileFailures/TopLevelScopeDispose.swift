// Must not compile: at the top level of main.swift, Swift picks the synchronous `Scope.dispose()` for
// `await scope.dispose()`, which would leave the async hooks unawaited; `.ci/check-compile-failures.sh`
// checks that the compiler rejects it with the `noasync` message.
import Stimpak

let scope = Container().openScope()
await Task.yield()
await scope.dispose()
