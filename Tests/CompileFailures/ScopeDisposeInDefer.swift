// Must not compile: a `defer` cannot `await`, so in an async function `defer { scope.dispose() }` calls the
// synchronous `Scope.dispose()`, which would start the async hooks in a task of their own and drop their
// failures; `.ci/check-compile-failures.sh` checks that the compiler rejects it with the `noasync` message
// (`withScope` is the form that awaits them however the body ends).
import Stimpak

func handle(_ container: Container) async {
    let scope = container.openScope()
    defer { scope.dispose() }
    _ = await scope.resolve(Int.self)
}
