import Hummingbird
public import Stimpak
public import StimpakHummingbird
public import StimpakServer

/// A test's own scope between the container and its requests: it holds the test's fakes, the requests'
/// scopes open below it, and it checks afterwards that none is left open and no instance outlives its scope.
///
/// ```swift
/// @Test func ordersUseTheFakeMailer() async throws {
///     let test = StimpakTestScope(container: App.makeContainer(), installing: FakeMail())
///     let router = Router(context: BasicStimpakRequestContext.self)
///     router.add(middleware: test.middleware())
///     App.addRoutes(to: router)
///     try await Application(router: router).test(.router) { client in
///         try await client.execute(uri: "/orders", method: .post) { #expect($0.status == .ok) }
///     }
///     try await test.requireNoLeaks()
/// }
/// ```
/// It turns on the container's ``Stimpak/Container/tracksInstances``, so that the instances of each request's
/// scope can be checked once it is disposed.
public final class StimpakTestScope: Sendable {
    /// The container.
    public let container: Container
    /// The test's scope: the parent of every request scope the test's middleware opens.
    public let scope: Scope
    /// The request scopes whose disposal began, and those whose disposal ended.
    private let record = RequestScopeRecord()

    /// Opens a test scope below `container` and installs `modules` into it.
    /// - Parameters:
    ///   - container: The app's container.
    ///   - modules: The test's fakes: their registrations override the container's in every request.
    public init(container: Container, installing modules: any ScopeModule...) {
        self.container = container
        container.tracksInstances = true
        scope = container.openScope()
        scope.install(modules)
    }

    /// The middleware for the test's router: it opens each request's scope below the test's scope.
    /// - Parameter showsErrorDetails: Whether a resolution error's message goes into the 500 response.
    /// - Returns: The middleware.
    public func middleware<Context: StimpakRequestContext>(
        context: Context.Type = Context.self, showsErrorDetails: Bool = true
    ) -> StimpakMiddleware<Context> {
        StimpakMiddleware(parent: scope, showsErrorDetails: showsErrorDetails, record: record)
    }

    /// How many request scopes have been disposed.
    public var disposedRequestCount: Int { record.disposedCount }

    /// How many request scopes are open below the test's scope.
    public var openRequestCount: Int { scope.openScopeCount }

    /// Throws when a request scope is still open below the test's scope, or an instance a disposed request
    /// scope cached is still alive.
    ///
    /// A streamed body's scope is disposed once the body is written, and an instance the body captured is
    /// released with the response, which can be after its scope's disposal: this waits up to `timeout` for both
    /// before it reports them.
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
        request.provideSampleRequestValues()
        let report = await container.validateByResolving()
        await request.dispose()
        return report
    }
}

/// What ``StimpakTestScope/requireNoLeaks(timeout:)`` found: the request scopes left open, and the instances alive
/// after their request scope was disposed.
public typealias LeakReport = StimpakServer.LeakReport
