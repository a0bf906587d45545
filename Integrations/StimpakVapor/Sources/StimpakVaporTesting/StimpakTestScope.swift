public import Stimpak
public import StimpakServer
import StimpakVapor
public import Vapor

/// A test's own scope between the app's container and its requests: it holds the test's fakes, the
/// requests' scopes open below it, and it checks afterwards that none is left open and no instance outlives
/// its scope.
///
/// ```swift
/// @Test func ordersUseTheFakePool() async throws {
///     try await withApp(configure: App.configure) { app in
///         let test = try StimpakTestScope(app, installing: FakePool())   // a ScopeModule
///         try await app.testing().test(.GET, "orders") { #expect($0.status == .ok) }
///         try await test.requireNoLeaks()
///     }
/// }
/// ```
/// It turns on the container's ``Stimpak/Container/tracksInstances``, so that the instances of each request's
/// scope can be checked once it is disposed.
public final class StimpakTestScope: Sendable {
    /// The app's container.
    public let container: Container
    /// The test's scope: the parent of every request scope the app opens from now on.
    public let scope: Scope
    let application: Application
    /// The request scopes whose disposal began, and those whose disposal ended.
    private let record = RequestScopeRecord()

    /// Opens a test scope below the app's container, installs `modules` into it, and makes the app open its
    /// request scopes below it.
    /// - Parameters:
    ///   - application: The app, after `app.stimpak.use(container)`.
    ///   - modules: The test's fakes: their registrations override the container's in every request.
    /// - Throws: ``StimpakNotInUse`` when the app has no container.
    public init(_ application: Application, installing modules: any ScopeModule...) throws(StimpakNotInUse) {
        guard let container = application.stimpak.container else { throw StimpakNotInUse() }
        self.application = application
        self.container = container
        container.tracksInstances = true
        scope = container.openScope()
        scope.install(modules)
        _ = application.stimpak.openRequestScopes(below: scope, record: record)
    }

    /// How many request scopes have been disposed.
    public var disposedRequestCount: Int { record.disposedCount }

    /// How many request scopes are open below the test's scope.
    public var openRequestCount: Int { scope.openScopeCount }

    /// Throws when a request scope is still open below the test's scope, or an instance a disposed request
    /// scope cached is still alive.
    ///
    /// A streamed response's scope is disposed once Vapor releases the response, and an instance the response's
    /// body captured is released with the response, which can be after its scope's disposal: this waits up to
    /// `timeout` for both before it reports them.
    /// - Parameter timeout: How long to wait for the request scopes still open to be disposed and their
    ///   instances to be released.
    /// - Throws: ``LeakReport``.
    public func requireNoLeaks(timeout: Duration = .seconds(5)) async throws(LeakReport) {
        try await LeakReport.check(openBelow: scope, record: record, timeout: timeout)
    }

    /// Makes every registration in a copy of the container with a request's values provided, as a request
    /// scope below the test's scope has them (see ``Stimpak/Container/validateByResolving()``).
    /// - Returns: The problems found.
    public func validateRequestScope() async -> ValidationReport {
        let request = scope.openScope()
        request.provideSampleRequestValues(application: application)
        let report = await container.validateByResolving()
        await request.dispose()
        return report
    }
}

/// ``StimpakTestScope`` made for an app that has no container: `app.stimpak.use(container)` is missing.
public struct StimpakNotInUse: Error, CustomStringConvertible {
    /// The error.
    public init() {}

    /// What is missing, and the fix.
    public var description: String {
        "The app has no Stimpak container. Fix: call app.stimpak.use(container) (your configure function) before StimpakTestScope(app)."
    }
}

/// What ``StimpakTestScope/requireNoLeaks(timeout:)`` found: the request scopes left open, and the instances alive
/// after their request scope was disposed.
public typealias LeakReport = StimpakServer.LeakReport
