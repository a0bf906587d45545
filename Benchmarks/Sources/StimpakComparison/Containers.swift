import Stimpak
import StimpakFixtures
import Swinject

// MARK: - Stimpak

/// The container of scenarios 1 to 6 and 8.
func makeStimpak() -> Stimpak.Container {
    let container = Stimpak.Container()
    container.register(Foo1.self) { Foo1() }
    container.register(Foo2.self, reuse: .singleton) { Foo2() }
    container.register(A3.self) { A3() }
    container.register(B3.self) { B3() }
    container.register(C3.self) { C3() }
    container.register(Root3.self) { (scope: Scope) in
        Root3(a: try scope.require(A3.self), b: try scope.require(B3.self), c: try scope.require(C3.self))
    }
    container.register(WithArgs4.self) { (s: String, i: Int) in WithArgs4(s: s, i: i) }
    container.register(Foo5.self, key: "x") { Foo5() }
    container.register(Foo5S.self, reuse: .singleton, key: "x") { Foo5S() }
    container.register(Request6.self, reuse: .inScope) { Request6() }
    container.register(Foo8.self, reuse: .singleton) { Foo8() }
    container.register(Config8.self, reuse: .singleton) { Config8(port: 8080, workers: 4) }
    container.register(Foo9S.self, reuse: .scopedTo(Session9.self)) { Foo9S() }
    container.register(Foo9W.self, reuse: .weak) { Foo9W() }
    container.register(Foo10A.self, reuse: .singleton) { () async in Foo10A() }
    container.register(Request10.self, reuse: .inScope) { () async in Request10() }
    container.register(AsyncSession10.self, reuse: .inScope) { () async in AsyncSession10() }
    container.register(SyncSession10.self, reuse: .inScope) { SyncSession10() }
    return container
}

private func registerFiller<T: Filler>(_ container: Stimpak.Container, _: T.Type) {
    container.register(T.self) { T() }
}

/// Scenario 7: 1,000 registrations of 1,000 distinct generated types (StimpakFixtures), plus `Foo7`.
func makeLargeStimpak() -> Stimpak.Container {
    let container = Stimpak.Container()
    for type in fillerTypes { registerFiller(container, type) }
    container.register(Foo7.self) { Foo7() }
    return container
}

// MARK: - Swinject

/// Scenarios 1 to 6 and 8. Transients are `.transient` explicitly (Swinject's default is `.graph`, which
/// also makes a new instance per top-level resolve but tracks it for the graph).
func makeSwinject() -> Swinject.Container {
    let container = Swinject.Container()
    container.register(Foo1.self) { _ in Foo1() }.inObjectScope(.transient)
    container.register(Foo2.self) { _ in Foo2() }.inObjectScope(.container)
    container.register(A3.self) { _ in A3() }.inObjectScope(.transient)
    container.register(B3.self) { _ in B3() }.inObjectScope(.transient)
    container.register(C3.self) { _ in C3() }.inObjectScope(.transient)
    container.register(Root3.self) { r in
        Root3(a: r.resolve(A3.self)!, b: r.resolve(B3.self)!, c: r.resolve(C3.self)!)
    }.inObjectScope(.transient)
    container.register(WithArgs4.self) { (_: Resolver, s: String, i: Int) in WithArgs4(s: s, i: i) }
        .inObjectScope(.transient)
    container.register(Foo5.self, name: "x") { _ in Foo5() }.inObjectScope(.transient)
    container.register(Foo5S.self, name: "x") { _ in Foo5S() }.inObjectScope(.container)
    container.register(Foo8.self) { _ in Foo8() }.inObjectScope(.container)
    container.register(Config8.self) { _ in Config8(port: 8080, workers: 4) }.inObjectScope(.container)
    container.register(Foo9W.self) { _ in Foo9W() }.inObjectScope(.weak)
    return container
}

/// Scenario 6 in Swinject: a `.container`-scoped instance lives in the container whose registration
/// made it, and a child container shares its parent's registrations (and their instances), so the
/// idiomatic per-request scope is a child container with the request-scoped services registered in it,
/// dropped at the end of the request (Swinject has no dispose). The other idiom, a custom `ObjectScope`
/// reset with `resetObjectScope` after each request, can't serve two requests at once.
func swinjectRequest(parent: Swinject.Container) -> Swinject.Container {
    let request = Swinject.Container(parent: parent)
    request.register(Request6.self) { _ in Request6() }.inObjectScope(.container)
    return request
}

/// Scenario 6, one request: Stimpak opens a scope, resolves its `.inScope` service twice and disposes it;
/// Swinject makes a child container and resolves twice (what every table runs).
@inline(__always)
func stimpakRequestCycle(_ container: Stimpak.Container, id: Int) {
    let request = container.openScope(id)
    sink(request.resolve(Request6.self)!)
    sink(request.resolve(Request6.self)!)
    request.dispose()
}

@inline(__always)
func swinjectRequestCycle(_ container: Swinject.Container) {
    let request = swinjectRequest(parent: container)
    sink(request.resolve(Request6.self)!)
    sink(request.resolve(Request6.self)!)
}

private func registerFiller<T: Filler>(_ container: Swinject.Container, _: T.Type) {
    container.register(T.self) { _ in T() }.inObjectScope(.transient)
}

func makeLargeSwinject() -> Swinject.Container {
    let container = Swinject.Container()
    for type in fillerTypes { registerFiller(container, type) }
    container.register(Foo7.self) { _ in Foo7() }.inObjectScope(.transient)
    return container
}
