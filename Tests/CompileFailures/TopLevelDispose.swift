// Must not compile: at the top level of main.swift, Swift picks the synchronous `dispose()` for
// `await container.dispose()`, which would leave the async hooks unawaited; `.ci/check-compile-failures.sh`
// checks that the compiler rejects it with the `noasync` message.
import Stimpak

let container = Container()
await Task.yield()
await container.dispose()
