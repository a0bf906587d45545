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

/// 2b and 8: the hand-written singleton, a stored reference.
let storedFoo2 = Foo2()
let storedFoo8 = Foo8()
