// Must not compile: at the top level of main.swift, Swift picks the synchronous `disposeScope(_:)` for
// `await container.disposeScope(scope)`, which would leave the async hooks unawaited;
// `.ci/check-compile-failures.sh` checks that the compiler rejects it with the `noasync` message.
import Stimpak

let container = Container()
let scope = container.openScope()
await Task.yield()
await container.disposeScope(scope)
