import Stimpak

// The services of each scenario: distinct final classes, so that no scenario shares a registration or a
// cached instance with another.

final class Foo1: Sendable { init() {} }  // 1. transient
final class Foo2: Sendable { init() {} }  // 2. singleton
final class A3: Sendable { init() {} }  // 3. the three dependencies
final class B3: Sendable { init() {} }
final class C3: Sendable { init() {} }
final class Root3: Sendable {
    let a: A3
    let b: B3
    let c: C3
    init(a: A3, b: B3, c: C3) {
        self.a = a
        self.b = b
        self.c = c
    }
}
final class WithArgs4: Sendable {  // 4. two runtime arguments
    let s: String
    let i: Int
    init(s: String, i: Int) {
        self.s = s
        self.i = i
    }
}
final class Foo5: Sendable { init() {} }  // 5. keyed, transient
final class Foo5S: Sendable { init() {} }  // 5b. keyed, singleton
final class Request6: Sendable { init() {} }  // 6. request cycle, .inScope
final class Foo7: Sendable { init() {} }  // 7. the measured type in the 1,000-registration registry
final class Foo8: Sendable { init() {} }  // 8. the singleton two threads share

/// 8c: a singleton of a value type, whose resolve touches no reference count.
struct Config8: Sendable {
    let port: Int
    let workers: Int
}

/// 2b and 8: the hand-written singleton, a stored reference to an object made at run time, as a
/// container's singleton is. (`let x = Foo()` would be initialized statically as an immortal object,
/// whose reference counting is a no-op: no floor for a shared object that two threads retain.)
@inline(never)
func madeAtRunTime<T>(_ make: () -> T) -> T { make() }
let storedFoo2 = madeAtRunTime { Foo2() }
let storedFoo8 = madeAtRunTime { Foo8() }
let storedConfig8 = madeAtRunTime { Config8(port: 8080, workers: 4) }

final class Foo9S: Sendable { init() {} }  // 9a. .scopedTo, cached
final class Foo9W: Sendable { init() {} }  // 9b. .weak, alive
struct Session9: Hashable, Sendable { let id: Int }  // 9a. the session scope's key type
final class Request9: Sendable { init() {} }  // 9c. a provided value
final class Foo10A: Sendable { init() {} }  // 10a. a singleton made by an async factory
final class Foo10C: Sendable { init() {} }  // 10b. a singleton made once, by an async or a synchronous factory
final class Request10: Sendable { init() {} }  // 10c. an `.inScope` service made by an async factory
/// 10d. a request's `.inScope` session made by an async factory and closed by an async hook.
final class AsyncSession10: AsyncDisposable, Sendable {
    init() {}
    func dispose() async {}
}
/// 10d's synchronous twin: made by a synchronous factory, closed by a synchronous hook.
final class SyncSession10: Disposable, Sendable {
    init() {}
    func dispose() {}
}

// 11–13. contention (Contention.swift): a request's session and the pool it takes from, the cached services
// that reader threads resolve nonstop, ten cached singletons a server request resolves, the writers' key.
final class Pool11: Sendable { init() {} }  // a `.singleton` the session depends on
final class Session11: Sendable {  // the request's `.inScope` session
    let pool: Pool11
    init(pool: Pool11) { self.pool = pool }
}
final class Cached11: Sendable { init() {} }  // the readers' singleton
final class LongLived11: Sendable { init() {} }  // the readers' `.inScope` instance, in a long-lived scope
final class Dep12a: Sendable { init() {} }  // 12. the server request's ten cached singletons
final class Dep12b: Sendable { init() {} }
final class Dep12c: Sendable { init() {} }
final class Dep12d: Sendable { init() {} }
final class Dep12e: Sendable { init() {} }
final class Dep12f: Sendable { init() {} }
final class Dep12g: Sendable { init() {} }
final class Dep12h: Sendable { init() {} }
final class Dep12i: Sendable { init() {} }
final class Dep12j: Sendable { init() {} }
final class Unrelated13: Sendable { init() {} }  // 13. registered and unregistered by the writer, resolved by nobody
