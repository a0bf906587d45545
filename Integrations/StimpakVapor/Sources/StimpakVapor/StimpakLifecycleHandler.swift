public import Stimpak
internal import StimpakServer
public import Vapor

/// The container's life in the app's: at boot it validates the container and makes its eager singletons;
/// at shutdown it lets the server drain, then disposes the container, awaiting the asynchronous hooks (with
/// `asyncShutdown()`), and logs every hook that threw.
///
/// `app.stimpak.use(container)` adds it; add it by hand with `app.lifecycle.use(_:)` for a container that
/// is not the app's `app.stimpak` one.
///
/// ```swift
/// app.stimpak.use(container)
/// try await app.execute()
/// try await app.asyncShutdown()   // the server drains, then the container is disposed
/// ```
/// Vapor runs the lifecycle handlers' shutdown before it stops the server: when the app is serving
/// (`app.running` is set, as `serve` sets it), this handler shuts the server down first, which lets the
/// requests under way finish, so that no request scope is disposed under its handler. Validation treats
/// what `req.scope` provides (`Request`, ``RequestIdentifier``, `Logger`) as present in request scopes, so
/// a request-scoped consumer of the request is valid and a singleton that captures it is not. A synchronous
/// `boot()` (VaporTesting's `app.testing()` calls it) makes the eager singletons whose factories are
/// synchronous; the others are made when first resolved.
public struct StimpakLifecycleHandler: LifecycleHandler {
    /// The container.
    public let container: Container
    let validates: Bool

    /// A handler for `container`.
    /// - Parameters:
    ///   - container: The container.
    ///   - validates: Whether boot fails on a validation problem (``Stimpak/Container/validate()``).
    public init(container: Container, validates: Bool = true) {
        self.container = container
        self.validates = validates
    }

    /// Validates the container and makes its eager singletons whose factories are synchronous.
    /// - Parameter application: The app.
    /// - Throws: ``InvalidContainer`` when validation finds a problem; `EagerSingletonFailures` when an eager
    ///   singleton cannot be made. Either stops the boot.
    public func willBoot(_ application: Application) throws {
        try validate(application)
        do {
            try container.makeEagerSingletons()
        } catch {
            let failures = error.failures.filter { $0.code != .requiresAwait }
            guard !failures.isEmpty else { return }
            application.logger.error("Stimpak: \(error)")
            throw error
        }
    }

    /// Validates the container and makes its eager singletons, awaiting the asynchronous factories.
    /// - Parameter application: The app.
    /// - Throws: ``InvalidContainer`` when validation finds a problem; `EagerSingletonFailures` when an eager
    ///   singleton cannot be made. Either stops the boot.
    public func willBootAsync(_ application: Application) async throws {
        try validate(application)
        do {
            try await container.makeEagerSingletons()
        } catch {
            application.logger.error("Stimpak: \(error)")
            throw error
        }
    }

    /// Shuts the server down if it is serving, then disposes the container; asynchronous hooks are started,
    /// not awaited (`asyncShutdown()` awaits them).
    /// - Parameter application: The app.
    public func shutdown(_ application: Application) {
        if application.running != nil { application.server.shutdown() }
        log(container.dispose(), to: application)
    }

    /// Shuts the server down if it is serving, letting the requests under way finish, then disposes the
    /// container, awaiting its asynchronous hooks.
    /// - Parameter application: The app.
    public func shutdownAsync(_ application: Application) async {
        if application.running != nil { await application.server.shutdown() }
        // In a task of its own when this one is cancelled (a cancelled service group): no hook is cancelled with it.
        let container = self.container
        log(await RequestScopes.uncancelled { await container.dispose() }, to: application)
    }

    private func log(_ failures: [DisposalFailure], to application: Application) {
        for failure in failures {
            application.logger.error(
                "Disposing \(failure.service) at shutdown threw", metadata: ["stimpak.error": "\(failure.error)"])
        }
    }

    private func validate(_ application: Application) throws(InvalidContainer) {
        guard validates else { return }
        let problems = Self.problems(of: container, application: application)
        for problem in problems { application.logger.error("Stimpak: \(problem)") }
        guard problems.isEmpty else { throw InvalidContainer(problems: problems) }
    }

    /// ``Stimpak/Container/validate()``'s problems with a request's values provided in a request scope, as
    /// `req.scope` provides them.
    static func problems(of container: Container, application: Application) -> [ResolutionError] {
        let sample = container.openScope()
        sample.provideSampleRequestValues(application: application)
        let problems = container.validate().problems
        sample.dispose()
        return problems
    }
}

extension Scope {
    /// Provides a `GET /` request, its id and its logger, as `req.scope` holds a request's values: a request
    /// scope for validation.
    /// - Parameter application: The app the request is for.
    public func provideSampleRequestValues(application: Application) {
        let request = Request(application: application, on: application.eventLoopGroup.any())
        provideRequestValues(request: request, id: RequestIdentifier(request.id), logger: request.logger)
    }
}

/// The problems ``StimpakLifecycleHandler`` found in the container at boot, each with its path and fix.
public struct InvalidContainer: Error, CustomStringConvertible {
    /// The problems.
    public let problems: [ResolutionError]

    /// Every problem, one a line.
    public var description: String {
        (["Stimpak found \(problems.count) problems in the container:"] + problems.map { "- \($0)" })
            .joined(separator: "\n")
    }
}
