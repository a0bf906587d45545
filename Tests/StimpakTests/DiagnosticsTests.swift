import Testing
import Stimpak

/// Validation, the dependency graph, the live report, the leak check, the observer, and the improved messages.
@Suite struct DiagnosticsTests {
    final class Api: @unchecked Sendable { init(_ logger: Logger?) {} }
    final class Logger: @unchecked Sendable { init() {} }
    final class Repository: @unchecked Sendable { init(_ api: Api) {} }
    final class Left: @unchecked Sendable { init(_ right: Right) {} }
    final class Right: @unchecked Sendable { init(_ left: Left) {} }
    final class Cache: @unchecked Sendable { init(_ session: Session) {} }
    final class Session: @unchecked Sendable { init() {} }
    final class Connection: Disposable, @unchecked Sendable { func dispose() {} }
    final class Feed: @unchecked Sendable { init() {} }
    final class Remote: @unchecked Sendable { init() {} }
    struct Settings { var value = 1 }
    struct RequestInfo: Sendable { let id: Int }
    final class Audit: @unchecked Sendable { init(_ request: RequestInfo) {} }

    @Test("validate() reports a container's ten different problems all at once, each with its path and fix")
    func tenProblems() throws {
        let container = Container()
        container.autowire(Repository.self, Repository.init)  // 1. Api missing
        container.register(Logger.self, key: "http") { Logger() }
        container.register(Feed.self) { Feed() }.dependsOn(ServiceKey(service: Logger.self, key: "audit"))  // 2. key
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        container.register(Remote.self) { Remote() }.dependsOn(ServiceKey(service: Person.self, arguments: Int.self))  // 3. arguments
        container.autowire(Left.self, Left.init)  // 4. cycle
        container.autowire(Right.self, Right.init)
        container.register(Session.self, reuse: .inScope) { Session() }
        container.autowire(Cache.self, reuse: .singleton, Cache.init)  // 5. captive
        container.register(Connection.self) { Connection() }  // 6. disposable transient
        container.register(Foo.self, reuse: .singleton) { () async in Foo() }
        container.register(Clock.self) { Clock() }.dependsOn(Foo.self)  // 7. async from sync
        container.register(Settings.self, reuse: .weak) { Settings() }  // 8. weak value type
        container.register(Int.self, { (seed: Int) in seed }, reuse: .eagerSingleton)  // 9. eager with arguments
        container.openScope("request").provide(RequestInfo(id: 1))
        container.autowire(Audit.self, reuse: .singleton, Audit.init)  // 10. provided out of sight
        let report = container.validate()
        let codes = report.problems.map(\.code)
        #expect(report.problems.count == 10, "\(report)")
        #expect(codes.filter { $0 == .notRegistered }.count == 4)
        #expect(codes.contains(.dependencyCycle))
        #expect(codes.contains(.captiveDependency))
        #expect(codes.contains(.disposableTransient))
        #expect(codes.contains(.requiresAwait))
        #expect(codes.contains(.weakValueType))
        #expect(codes.contains(.eagerSingletonWithArguments))
        let text = report.description
        #expect(text.contains("Stimpak found 10 problems in the container's registrations:"))
        #expect(text.contains("Resolution path: Repository → Api."))
        #expect(text.contains("Registered for Logger: Logger[key: \"http\"]"))
        #expect(text.contains("Registered for Person: Person(String, String)"))
        #expect(text.contains("Left → Right → Left"))
        #expect(text.contains("Cache → Session"))
        #expect(text.contains("Clock → Foo"))
        #expect(text.contains("A value of it was put into a scope with provide(_:)"))
        #expect(report.problems.filter { $0.code == .dependencyCycle }.count == 1, "the cycle once, not once per member")
        #expect(!report.unchecked.isEmpty)
        let thrown = try #require(throws: ValidationReport.self) { try container.requireValid() }
        #expect(thrown.problems.count == 10)
        // Registering on the disposed container is refused, and validation says so.
        container.dispose()
        container.register(Api.self) { Api(nil) }
        #expect(container.validate().problems.contains { $0.code == .registeredAfterDisposal })
        #expect(!container.isRegistered(Api.self))
    }

    @Test("a valid container validates clean; optional, lazy and collection dependencies may be missing")
    func valid() throws {
        let container = Container()
        container.autowire(Api.self, Api.init)  // Logger? may be missing
        container.autowire(Repository.self, reuse: .singleton, Repository.init)
        container.register(Foo.self) { (scope: Scope) in
            _ = try scope.require(Lazy<Logger>.self)
            return Foo()
        }
        .dependsOn([Logger].self)
        try container.requireValid()
        #expect(container.validate().unchecked.isEmpty)
        #expect(container.validate().description == "Stimpak found no problem in the container's registrations.")
    }

    @Test("validateByResolving makes everything in a throwaway copy, including undeclared closure factories")
    func byResolving() async throws {
        let log = EventLog()
        let container = Container()
        container.register(Feed.self, reuse: .singleton) {
            log.append("made"); return Feed()
        }
        container.register(Remote.self) { (scope: Scope) in
            _ = try scope.require(Logger.self)  // not declared: only resolving finds it
            return Remote()
        }
        container.register(Audit.self, reuse: .inScope) { (scope: Scope) in Audit(try scope.require(RequestInfo.self)) }
        let request = container.openScope("request")
        request.provide(RequestInfo(id: 7))
        let report = await container.validateByResolving()
        #expect(report.problems.map(\.requested) == [ServiceKey(service: Logger.self)])
        #expect(report.problems.first?.pathDescription == "Remote → Logger")
        #expect(log.events == ["made"], "made once, in the copy")
        #expect(container.root.report().instances.isEmpty, "nothing made in the container itself")
        #expect(request.report().instances.isEmpty)
    }

    @Test("validateByResolving binds the copy as the current scope: a factory's inject resolves there")
    func byResolvingBindsTheCopy() async {
        let log = EventLog()
        let container = Container()
        container.register(Feed.self, reuse: .singleton) {
            log.append("made"); return Feed()
        }
        container.register(Remote.self) { () throws -> Remote in
            _ = try inject(Feed.self)  // from the current scope, which no code here binds
            return Remote()
        }
        let report = await container.validateByResolving()
        #expect(report.problems.isEmpty, "\(report)")
        #expect(log.events == ["made"], "made once, in the copy")
        #expect(container.root.report().instances.isEmpty, "nothing made in the container itself")
    }

    /// The copy reads each registration's settings, which `register` and its refinements write under this
    /// container's lock: run under the thread sanitizer, a copy that read them under its own lock only is a race.
    @Test("validateByResolving copies registrations while another thread registers over them and refines them")
    func byResolvingWhileAThreadRegistersOver() async {
        let container = Container()
        container.register(Session.self) { Session() }
        let request = container.openScope("request")
        let stop = Signal()
        let stopped = Signal()
        detach {
            while !stop.wait(seconds: 0) {
                container.register(Feed.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Feed() }
                    .onDispose { _ in }
                    .dependsOn(Session.self)
                request.register(Remote.self, ifAlreadyRegistered: .replace) { Remote() }
                    .onDispose { _ in }
                    .dependsOn(Session.self)
            }
            stopped.fire()
        }
        for _ in 0..<200 {
            let report = await container.validateByResolving()
            #expect(report.problems.isEmpty, "\(report)")
        }
        stop.fire()
        #expect(stopped.wait())
    }

    @Test("validateByResolving keeps a failure of another kind for a service that validate() reported")
    func byResolvingKeepsAnotherProblemOfTheSameService() async {
        let container = Container()
        container.register(Settings.self, reuse: .weak) { () throws -> Settings in throw Boom() }
        let codes = await container.validateByResolving().problems.map(\.code)
        #expect(codes == [.weakValueType, .factoryFailed])
    }

    @Test("validate() reports an async service that a synchronous factory takes as an optional parameter")
    func optionalParameterOfAnAsyncService() {
        final class Screen: @unchecked Sendable { init(_ feed: Feed?) {} }
        let container = Container()
        container.register(Feed.self) { () async in Feed() }
        container.autowire(Screen.self, Screen.init)
        // Optional means "nil when not registered": an async service fails, so validation says so.
        #expect(container.validate().problems.map(\.code) == [.requiresAwait])
        let error = #expect(throws: ResolutionError.self) { try container.require(Screen.self) }
        #expect(error?.code == .requiresAwait)
    }

    @Test("the graph of a fixed container, as DOT and as Mermaid")
    func graph() throws {
        let container = Container()
        container.register(Logger.self, reuse: .singleton) { Logger() }
        container.autowire(Api.self, Api.init)
        container.autowire(Repository.self, reuse: .inScope, Repository.init)
        let graph = container.dependencyGraph()
        #expect(
            graph.dot == """
                digraph Stimpak {
                  rankdir=LR;
                  node [fontname="Helvetica"];
                  n1 [label="Logger\\n.singleton", shape=ellipse];
                  n2 [label="Api\\n.transient", shape=box];
                  n3 [label="Repository\\n.inScope", shape=ellipse];
                  n2 -> n1;
                  n3 -> n2;
                }
                """)
        #expect(
            graph.mermaid == """
                flowchart LR
                  n1["Logger .singleton"]
                  n2["Api .transient"]
                  n3["Repository .inScope"]
                  n2 --> n1
                  n3 --> n2
                """)
    }

    @Test("a value declared provided by scopes satisfies scoped services, not singletons, and is drawn as provided")
    func declaredProvided() throws {
        let container = Container()
        container.registerProvided(RequestInfo.self)
        container.autowire(Audit.self, reuse: .inScope, Audit.init)
        #expect(container.validate().isValid)
        container.autowire(Audit.self, reuse: .singleton, key: "global", Audit.init)
        let problems = container.validate().problems
        #expect(problems.map(\.code) == [.notRegistered])
        #expect(problems.first?.description.contains("where that value is not visible") == true)
        #expect(container.dependencyGraph().mermaid.contains("([\"RequestInfo (provided)\"])"))
        #expect(container.dependencyGraph().dot.contains("RequestInfo\\nprovided\", shape=note, style=dashed"))
    }

    @Test("observed dependencies are recorded while asked, and drawn dashed")
    func observedGraph() throws {
        let container = Container()
        container.register(Logger.self) { Logger() }
        container.register(Feed.self) { (scope: Scope) in
            _ = try scope.require(Logger.self)
            return Feed()
        }
        container.recordsDependencies = true
        _ = try container.require(Feed.self)
        container.recordsDependencies = false
        let graph = container.dependencyGraph()
        #expect(graph.observed == [DependencyGraph.Edge(from: ServiceKey(service: Feed.self), to: ServiceKey(service: Logger.self))])
        #expect(graph.dot.contains("n2 -> n1 [style=dashed];"))
        #expect(graph.mermaid.contains("n2 -.-> n1"))
    }

    @Test("the live report lists each open scope's cached instances in creation order")
    func liveReport() throws {
        let container = Container()
        container.register(Logger.self, reuse: .singleton) { Logger() }
        container.register(Session.self, reuse: .inScope) { Session() }
        container.register(Feed.self, reuse: .scopedTo("session")) { Feed() }
        let session = container.openScope("session")
        let request = session.openScope("request")
        request.provide(RequestInfo(id: 3))
        _ = try request.require(Logger.self)
        _ = try request.require(Session.self)
        _ = try request.require(Feed.self)
        let report = container.root.report()
        #expect(report.instances.map(\.service) == [ServiceKey(service: Logger.self)])
        #expect(report.totalInstances == 3)
        #expect(report.totalScopes == 2)
        let sessionReport = try #require(report.children.first)
        #expect(sessionReport.instances.map(\.service) == [ServiceKey(service: Feed.self)], "the owner, not the request that found it")
        let requestReport = try #require(sessionReport.children.first)
        #expect(requestReport.instances.map(\.service) == [ServiceKey(service: Session.self)])
        #expect(requestReport.provided == [ServiceKey(service: RequestInfo.self)])
        #expect(
            report.description == """
                root: 1 cached, 1 open below
                  - #1 Logger .singleton
                  scope "session": 1 cached, 1 open below
                    - #3 Feed .scopedTo("session")
                    scope "request": 1 cached, 0 open below
                      - #2 Session .inScope
                      - provided RequestInfo
                """)
        #expect(container.openScopeCount == 1)
        #expect(session.openScopes.map(\.key) == ["request"])
    }

    /// How a registration whose instances scopes keep is taken out of use.
    enum Removal: String, CaseIterable, Sendable {
        case replacedInContainer, unregisteredFromContainer, replacedInScope, unregisteredFromScope, providedOver
    }

    /// A scope's table names the container's registration of an instance it keeps without holding it while it is
    /// registered; taken out of use, the registration is held by every open scope that keeps an instance of it
    /// (a scope's own registration, by the slots its instances go through), so the live report names that instance
    /// by it (and never reads a freed one) until those scopes are disposed. Then it goes.
    @Test("the live report names an instance whose registration was taken out of use", arguments: Removal.allCases)
    func liveReportAfterRemoval(_ removal: Removal) throws {
        let container = Container()
        let session = container.openScope("session")
        weak var registration: ServiceResolver<Session, Void>?
        do {
            let made =
                switch removal {
                case .replacedInContainer, .unregisteredFromContainer: container.register(Session.self, reuse: .inScope) { Session() }
                default: session.register(Session.self, reuse: .inScope) { Session() }
                }
            registration = made
        }
        let request = session.openScope("request")
        let below = request.openScope("below")
        // Kept in the tables of the scope that registers it (when it does) and of the two below.
        if case .replacedInScope = removal { _ = try session.require(Session.self) }
        _ = try request.require(Session.self)
        _ = try below.require(Session.self)
        switch removal {
        case .replacedInContainer:
            container.register(Session.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Session() }
        case .unregisteredFromContainer: #expect(container.unregister(Session.self))
        case .replacedInScope: session.register(Session.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Session() }
        case .unregisteredFromScope: #expect(session.unregister(Session.self))
        case .providedOver: session.provide(Session())
        }
        Container.reclaim()
        #expect(registration != nil, "held by the scopes that keep its instances")
        let report = session.report()
        let requestReport = try #require(report.children.first)
        for scopeReport in [requestReport, try #require(requestReport.children.first)] {
            #expect(scopeReport.instances.map(\.service) == [ServiceKey(service: Session.self)])
            #expect(scopeReport.instances.map(\.reuse) == [.inScope])
        }
        if case .replacedInScope = removal { #expect(report.instances.map(\.reuse) == [.inScope]) }
        session.dispose()
        Container.reclaim()
        #expect(registration == nil, "released with the last scope that kept an instance of it")
    }

    /// A factory runs without the container's lock: a registration unregistered or replaced while it runs (here by
    /// the factory itself; in a server, by another thread) keeps its instance in the scope's table with the
    /// registration held, and the report names it by it.
    @Test("an instance made while its registration was taken out of use keeps it for the report", arguments: [true, false])
    func liveReportAfterRemovalDuringCreation(replacing: Bool) throws {
        let container = Container()
        let scope = container.openScope("request")
        weak var registration: ServiceResolver<Session, Void>?
        registration = container.register(Session.self, reuse: .scopedTo("request")) { (_: Scope) in
            if replacing {
                container.register(Session.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Session() }
            } else {
                _ = container.unregister(Session.self)
            }
            return Session()
        }
        // A scope below finds its owner through `.scopedTo`: the owner, "request", keeps the instance.
        let below = scope.openScope("below")
        _ = try below.require(Session.self)
        Container.reclaim()
        #expect(registration != nil, "held by the table that keeps its instance")
        #expect(scope.report().instances.map(\.service) == [ServiceKey(service: Session.self)])
        #expect(scope.report().instances.map(\.reuse) == [.scopedTo("request")])
        scope.dispose()
        Container.reclaim()
        #expect(registration == nil)
    }

    @Test("the leak check names a disposed scope's instance that something still holds")
    func leakCheck() throws {
        let container = Container()
        container.tracksInstances = true
        container.register(Session.self, reuse: .inScope) { Session() }
        container.register(Feed.self, reuse: .inScope) { Feed() }
        let request = container.openScope("request")
        let leaked = try request.require(Session.self)
        _ = try request.require(Feed.self)
        #expect(request.survivors.isEmpty, "not disposed yet")
        request.dispose()
        let error = try #require(throws: SurvivorReport.self) { try request.requireNoSurvivors() }
        #expect(error.survivors.map(\.service) == [ServiceKey(service: Session.self)])
        #expect(error.description.contains("Session (a Session)"))
        withExtendedLifetime(leaked) {}
        let clean = container.openScope("clean")
        _ = try clean.require(Feed.self)
        clean.dispose()
        try clean.requireNoSurvivors()
    }

    @Test("the leak check of a disposed scope names the instances the scopes below it cached, open or disposed")
    func leakCheckBelow() throws {
        let container = Container()
        container.tracksInstances = true
        container.register(Session.self, reuse: .inScope) { Session() }
        let request = container.openScope("request")
        let leakedByChild = try request.openScope("child").require(Session.self)
        let disposedChild = request.openScope("disposed child")
        let leakedByDisposedChild = try disposedChild.require(Session.self)
        disposedChild.dispose()
        request.dispose()
        let error = try #require(throws: SurvivorReport.self) { try request.requireNoSurvivors() }
        #expect(error.survivors.map(\.service) == [ServiceKey(service: Session.self), ServiceKey(service: Session.self)])
        withExtendedLifetime((leakedByChild, leakedByDisposedChild)) {}
        let clean = container.openScope("clean")
        _ = try clean.openScope("child").require(Session.self)
        clean.dispose()
        try clean.requireNoSurvivors()
    }

    /// Resolves from the container it observes, in every callback: the resolves it makes are not observed again.
    final class ResolvingObserver: ResolutionObserver, @unchecked Sendable {  // `depth` and `reentered` are guarded by `lock`
        weak var container: Container?
        private let lock = TestLock()
        private var depth = 0
        private(set) var reentered = 0
        private(set) var events = 0

        /// Runs `body` unless the observer is already that deep in itself: a bound, so that a failing
        /// container recurses a few times instead of overflowing the stack.
        private func nested(_ body: () -> Void) {
            let entered: Bool = lock.withLock {
                events += 1
                depth += 1
                if depth > 1 { reentered += 1 }
                return depth <= 3
            }
            if entered { body() }
            lock.withLock { depth -= 1 }
        }

        func resolved(_ event: ResolutionEvent) { nested { _ = container?.resolve(Logger.self) } }
        func created(_ event: ResolutionEvent) { nested { _ = container?.resolve(Logger.self) } }
        func disposed(_ event: DisposalEvent) {
            nested {
                guard let scope = container?.openScope() else { return }
                _ = try? scope.require(Session.self)
                scope.dispose()
            }
        }
        var counts: (events: Int, reentered: Int) { lock.withLock { (events, reentered) } }
    }

    @Test("an observer that resolves from the container it observes is not called again for those resolves")
    func observerThatResolves() throws {
        let container = Container()
        let observer = ResolvingObserver()
        observer.container = container
        container.register(Logger.self) { Logger() }
        container.register(Session.self, reuse: .inScope) { Session() }.onDispose { _ in }
        container.observer = observer
        let request = container.openScope("request")
        _ = try request.require(Session.self)
        _ = try request.require(Logger.self)
        request.dispose()
        let counts = observer.counts
        #expect(counts.reentered == 0, "no callback runs inside another")
        #expect(counts.events == 5, "created and resolved Session, created and resolved Logger, disposed Session")
    }

    @Test("the observer sees every async resolve, and its failure")
    func observerSeesAsyncResolves() async throws {
        let container = Container()
        let recorder = Recorder()
        container.register(Logger.self) { () async in Logger() }
        container.register(Session.self, reuse: .singleton) { () async throws -> Session in throw Boom() }
        container.observer = recorder
        for _ in 0..<100 { _ = try await container.require(Logger.self) }
        _ = try? await container.require(Session.self)
        #expect(recorder.log.count(of: "resolved Logger") == 100)
        #expect(recorder.log.count(of: "created Logger") == 100)
        #expect(recorder.log.count(of: "resolved Session failed") == 1)
    }

    final class Recorder: ResolutionObserver, @unchecked Sendable {
        let log = EventLog()
        func resolved(_ event: ResolutionEvent) { log.append("resolved \(event.service)\(event.error == nil ? "" : " failed")") }
        func created(_ event: ResolutionEvent) { log.append("created \(event.service)") }
        func disposed(_ event: DisposalEvent) { log.append("disposed \(event.service)\(event.error == nil ? "" : " threw")") }
    }

    @Test("a created event names the scope that keeps the instance, not the one that resolved it (sync and async)")
    func createdEventNamesTheOwnerScope() async throws {
        final class Scopes: ResolutionObserver, @unchecked Sendable {
            let log = EventLog()
            func resolved(_ event: ResolutionEvent) {}
            func created(_ event: ResolutionEvent) { log.append("created \(event.service) in \(event.scopeKey.map { "\($0)" } ?? "root")") }
        }
        let container = Container()
        let scopes = Scopes()
        container.register(Session.self, reuse: .scopedTo("checkout")) { Session() }
        container.register(Logger.self, reuse: .scopedTo("checkout")) { () async in Logger() }
        container.observer = scopes
        let request = container.openScope("checkout").openScope("request")
        let synchronously = { () throws -> Session in try request.require(Session.self) }
        _ = try synchronously()
        _ = try await request.require(Logger.self)
        #expect(scopes.log.events == ["created Session in checkout", "created Logger in checkout"])
    }

    @Test("the observer sees every resolve (cached hits included), creation and disposal, and hooks that throw")
    func observer() throws {
        let container = Container()
        let recorder = Recorder()
        container.register(Session.self, reuse: .inScope) { Session() }.onDispose { _ in throw Boom() }
        container.register(Logger.self) { Logger() }
        _ = try container.openScope("warm").require(Logger.self)  // a published table, before observing
        container.observer = recorder
        let request = container.openScope("request")
        _ = try request.require(Session.self)
        _ = try request.require(Session.self)
        _ = try request.require(Logger.self)
        _ = request.resolve(Feed.self)
        request.dispose()
        #expect(
            recorder.log.events == [
                "created Session", "resolved Session", "resolved Session", "created Logger", "resolved Logger",
                "resolved Feed failed", "disposed Session threw",
            ])
        container.observer = nil
        _ = try container.openScope("after").require(Logger.self)
        #expect(recorder.log.events.count == 7, "nothing once removed")
    }

    @Test("improved messages: a disposed container, labelled arguments, a runaway path")
    func messages() throws {
        let container = Container()
        container.register(Person.self) { (first: String, last: String) in Person(first, last) }
        let labelled = try #require(throws: ResolutionError.self) {
            try container.require(Person.self, (first: "Bill", last: "Gates"))
        }
        #expect(
            labelled.description.contains(
                "The arguments (first: String, last: String) have labels, which make them another type than (String, String)"))
        container.register(Foo.self, { (depth: Int) in Foo() })
        for depth in 0..<200 {
            container.register(Clock.self, key: depth) { (scope: Scope) in
                _ = try scope.require(Clock.self, key: depth + 1)
                return Clock()
            }
        }
        let deep = try #require(throws: ResolutionError.self) { try container.require(Clock.self, key: 0) }
        #expect(deep.code == .resolutionTooDeep)
        #expect(deep.pathDescription.hasPrefix("Clock[key: 0] → Clock[key: 1] → Clock[key: 2] → Clock[key: 3] → … 121 more … → "))
        #expect(deep.pathDescription.hasSuffix("Clock[key: 128] (repeating: Clock)"))
        #expect(deep.description.count < 1_000, "not 129 steps")
        container.dispose()
        let disposed = try #require(throws: ResolutionError.self) { try container.require(Foo.self, 1) }
        #expect(disposed.description.contains("the container has been disposed"))
        #expect(disposed.description.contains("make a new Container"))
        #expect(!disposed.description.contains("openScope"))
    }

    @Test("onDispose runs before a Disposable's own dispose(), unless it replaces it")
    func onDisposeComposes() throws {
        let log = EventLog()
        let container = Container()
        container.register(Tracked.self, reuse: .inScope, key: "both") { Tracked("both", log: log) }
            .onDispose { _ in log.append("hook both") }
        container.register(Tracked.self, reuse: .inScope, key: "replaced") { Tracked("replaced", log: log) }
            .onDispose(replacingDispose: true) { _ in log.append("hook replaced") }
        let scope = container.openScope("s")
        _ = try scope.require(Tracked.self, key: "both")
        _ = try scope.require(Tracked.self, key: "replaced")
        scope.dispose()
        #expect(log.events == ["hook replaced", "hook both", "dispose both"])
    }

    @Test("every natural order of the register labels compiles")
    func callShapes() throws {
        let container = Container()
        container.register(Logger.self, key: "a", reuse: .singleton) { Logger() }
        container.register(Logger.self, reuse: .singleton, key: "b") { Logger() }
        container.register(Logger.self, key: "c", reuse: .inScope) { (scope: Scope) in Logger() }
        container.register(Logger.self, key: "d", reuse: .singleton) { () async in Logger() }
        container.register(Logger.self, reuse: .singleton, key: "e") { () async in Logger() }
        container.register(Logger.self, key: "f") { Logger() }
        container.register(Logger.self, reuse: .transient) { Logger() }
        container.register(Logger.self, key: "g", reuse: .singleton, ifAlreadyRegistered: .replace) { Logger() }
        #expect(container.registrations.count == 8)
    }
}
