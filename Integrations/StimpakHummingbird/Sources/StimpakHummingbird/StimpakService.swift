import Hummingbird
public import Logging
public import ServiceLifecycle
public import Stimpak
internal import StimpakServer

/// The container's life as a swift-service-lifecycle `Service`: at start-up it validates the container and
/// makes its eager singletons; after a graceful shutdown, once the server has drained, it disposes the
/// container, awaiting the asynchronous hooks, and logs every hook that threw.
///
/// ```swift
/// var app = Application(router: router)
/// app.addServices(StimpakService(container: container, logger: app.logger))
/// try await app.runService()
/// ```
/// Hummingbird's `Application` shuts its services down in reverse order, its server first: a service added
/// with `addServices` is shut down after the server has finished its requests. Validation treats what
/// ``StimpakMiddleware`` provides into each request's scope (`Request`, ``RequestIdentifier``, `Logger`) as
/// present in request scopes, so a request-scoped consumer of the request is valid and a singleton that
/// captures it is not. The eager singletons are made while the server starts: a request that needs one first
/// makes it itself (once either way).
public struct StimpakService: Service {
    /// The container.
    public let container: Container
    let logger: Logger
    let validates: Bool

    /// A service for `container`.
    /// - Parameters:
    ///   - container: The container.
    ///   - logger: Where validation problems and disposal failures are logged.
    ///   - validates: Whether start-up fails on a validation problem (``Stimpak/Container/validate()``).
    public init(container: Container, logger: Logger, validates: Bool = true) {
        self.container = container
        self.logger = logger
        self.validates = validates
    }

    /// Validates the container, makes its eager singletons, waits for the graceful shutdown, then disposes
    /// the container.
    ///
    /// When the service group is cancelled instead (another service threw, or the group was cancelled), the
    /// server is cancelled at the same time and may still be finishing requests: the container is disposed all
    /// the same, with a warning that says so, in a task of its own, so that its asynchronous hooks are not
    /// cancelled with the group. A failed start-up disposes what it made before it throws.
    /// - Throws: ``InvalidContainer`` when validation finds a problem; `EagerSingletonFailures` when an eager
    ///   singleton cannot be made. Either stops the service group, the server with it.
    public func run() async throws {
        if validates {
            let problems = Self.problems(of: container)
            for problem in problems { logger.error("Stimpak: \(problem)") }
            guard problems.isEmpty else {
                await disposeContainer()
                throw InvalidContainer(problems: problems)
            }
        }
        do {
            try await container.makeEagerSingletons()
        } catch {
            logger.error("Stimpak: \(error)")
            // The eager singletons made before the failure are disposed: their hooks run.
            await disposeContainer()
            throw error
        }
        do {
            try await gracefulShutdown()
        } catch {
            logger.warning(
                "Stimpak: the service group was cancelled, not shut down gracefully: disposing the container while requests may still be running")
        }
        await disposeContainer()
    }

    /// Disposes the container, in a task of its own when this one is cancelled (so that no hook is cancelled with
    /// it), and logs every hook that threw.
    private func disposeContainer() async {
        let container = self.container
        let failures = await RequestScopes.uncancelled { await container.dispose() }
        for failure in failures {
            logger.error("Disposing \(failure.service) at shutdown threw", metadata: ["stimpak.error": "\(failure.error)"])
        }
    }

    /// ``Stimpak/Container/validate()``'s problems with a request's values provided in a request scope, as
    /// ``StimpakMiddleware`` provides them.
    static func problems(of container: Container) -> [ResolutionError] {
        let sample = container.openScope()
        sample.provideSampleRequestValues()
        let problems = container.validate().problems
        sample.dispose()
        return problems
    }
}

extension Scope {
    /// Provides a `GET /` request, its id and a logger, as ``StimpakMiddleware`` provides a request's values:
    /// a request scope for validation.
    public func provideSampleRequestValues() {
        let request = Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/"),
            body: RequestBody(buffer: ByteBuffer()))
        var logger = Logger(label: "stimpak.validation")
        logger[metadataKey: "hb.request.id"] = "validation"
        provideRequestValues(request: request, id: RequestIdentifier("validation"), logger: logger)
    }
}

/// The problems ``StimpakService`` found in the container at start-up, each with its path and fix.
public struct InvalidContainer: Error, CustomStringConvertible {
    /// The problems.
    public let problems: [ResolutionError]

    /// Every problem, one a line.
    public var description: String {
        (["Stimpak found \(problems.count) problems in the container:"] + problems.map { "- \($0)" })
            .joined(separator: "\n")
    }
}
