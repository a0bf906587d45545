public import Logging
public import Stimpak
import Synchronization
public import Vapor

extension Request {
    /// The request's Stimpak scope: an anonymous child of the container's root opened for this request alone,
    /// with the request's values provided, disposed when the response has been sent.
    ///
    /// ```swift
    /// app.get("orders") { req async throws in
    ///     try await req.scope.require(OrderService.self).list()
    /// }
    /// ```
    /// The scope is opened on first use: by ``StimpakMiddleware`` when it binds the scope as the current one
    /// for the handler (its default), else by the first read of `req.scope`. It holds the request's values, which
    /// resolve there and nowhere else: the `Request`, its ``RequestIdentifier`` (`req.id`) and `req.logger`,
    /// which carries the request id.
    /// - Throws: ``MissingRequestScope`` when ``StimpakMiddleware`` is not on the route (call
    ///   `app.stimpak.use(container)` before the routes), or when the response has already been sent.
    public var scope: Scope {
        get throws(MissingRequestScope) {
            guard let slot = storage[RequestScopeSlot.Key.self] else {
                throw MissingRequestScope(path: url.path, cause: .noMiddleware)
            }
            return try slot.scope(for: self)
        }
    }
}

/// Where a request's scope lives between ``StimpakMiddleware``, which puts the slot into `req.storage`, and
/// its disposal: not opened yet, open, or closed once the response has been sent.
final class RequestScopeSlot: Sendable {
    struct Key: StorageKey {
        typealias Value = RequestScopeSlot
    }

    enum State {
        case unopened
        case open(Scope)
        case closed
    }

    /// The scope the request's scope opens below: the container's root, or a test's scope.
    let parent: Scope
    private let state = Mutex<State>(.unopened)

    init(parent: Scope) {
        self.parent = parent
    }

    /// The request's scope, opened (and given the request's values) by the first caller.
    func scope(for request: Request) throws(MissingRequestScope) -> Scope {
        let result: Result<Scope, MissingRequestScope> = state.withLock { state in
            switch state {
            case .open(let scope):
                return .success(scope)
            case .closed:
                return .failure(MissingRequestScope(path: request.url.path, cause: .responseSent))
            case .unopened:
                let scope = parent.openScope()
                scope.provideRequestValues(request: request, id: RequestIdentifier(request.id), logger: request.logger)
                state = .open(scope)
                return .success(scope)
            }
        }
        return try result.get()
    }

    /// Closes the slot: a later `req.scope` throws. Returns the scope if one was opened, for its disposal.
    func close() -> Scope? {
        state.withLock { state in
            defer { state = .closed }
            if case .open(let scope) = state { return scope }
            return nil
        }
    }
}

extension Scope {
    /// Provides what `req.scope` holds into a scope: the request, its id and its logger.
    ///
    /// For a scope made by hand: a test's sample request scope, validation.
    /// - Parameters:
    ///   - request: The request.
    ///   - id: Its id.
    ///   - logger: The logger with the request's metadata (`request-id`).
    public func provideRequestValues(request: Request, id: RequestIdentifier, logger: Logger) {
        provide(request)
        provide(id)
        provide(logger)
    }
}

/// The id of the request a scope serves: Vapor's `req.id`, the one its logger's metadata carries
/// (`request-id`). Provided into every request's scope.
public struct RequestIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The id as Vapor writes it.
    public let value: String

    /// An id with `value`.
    /// - Parameter value: The id.
    public init(_ value: String) { self.value = value }

    /// The id.
    public var description: String { value }
}

/// `req.scope` read where no request scope can be had: an internal server error whose message says why and
/// what to do.
public struct MissingRequestScope: AbortError, CustomStringConvertible {
    /// Why no scope can be had.
    public enum Cause: Sendable {
        /// ``StimpakMiddleware`` is not on the route.
        case noMiddleware
        /// The response has been sent and the request's scope disposed.
        case responseSent
    }

    /// The request's path.
    public let path: String
    /// Why no scope can be had.
    public let cause: Cause

    /// 500: the app is missing its middleware, or uses the scope too late.
    public var status: HTTPResponseStatus { .internalServerError }

    /// What is wrong, and the fix.
    public var description: String {
        switch cause {
        case .noMiddleware:
            "No Stimpak scope for the request to \(path): StimpakMiddleware opens it."
                + " Fix: call app.stimpak.use(container) before adding the routes (or add StimpakMiddleware to the route's group)."
        case .responseSent:
            "The Stimpak scope of the request to \(path) is read after its response was sent, when it is disposed."
                + " Fix: resolve what the response needs in the handler, before it returns."
        }
    }

    /// The ``description``: what Vapor's `ErrorMiddleware` puts into the response.
    public var reason: String { description }
}
