import Logging
public import Stimpak
internal import StimpakServer
import Synchronization
public import Vapor

/// Gives each request its Stimpak scope (`req.scope`), binds it as the current scope for the handler, and
/// disposes it, awaiting its asynchronous hooks, once the response has been sent.
///
/// `app.stimpak.use(container)` adds it to the app's global middleware; add it by hand to a route group to
/// give only those routes a scope:
///
/// ```swift
/// let api = app.grouped(StimpakMiddleware(container: container))
/// api.get("orders") { req async throws in try await req.scope.require(OrderService.self).list() }
/// ```
/// The request's scope is an anonymous child of the container's root (never shared, even by two requests
/// with the same `X-Request-ID`) holding the request's values: the `Request`, its ``RequestIdentifier`` and
/// `req.logger`. It is disposed exactly once, however the request ends: when the handler returns a body in
/// memory, when Vapor releases a streamed response (after its last byte, or after its write failed because
/// the client went away), when the handler throws, and when a middleware drops the response unwritten.
/// Disposal failures are logged at error level through `req.logger`, so with the request id. A
/// ``Stimpak/ResolutionError`` thrown by the handler is logged at error level and becomes a 500 (an `Abort`)
/// whose reason says what failed when `showsErrorDetails` is on (in development), and only the request id
/// otherwise.
///
/// An async route that comes next in the chain (this middleware is the last of the app's global middleware, or
/// of a route group's) runs in the middleware's task: one task per request, as without the middleware.
public struct StimpakMiddleware: AsyncMiddleware {
    let settings: StimpakSettings

    /// A middleware whose request scopes are children of `container`'s root.
    /// - Parameters:
    ///   - container: The container.
    ///   - showsErrorDetails: Whether a ``Stimpak/ResolutionError``'s message goes into the 500 response; on
    ///     in development only, since it names the app's types.
    ///   - bindsCurrentScope: Whether the scope is the current one while the handler runs, so that
    ///     `@Injected` and `inject()` resolve from it. Binding opens the scope before the handler runs; without
    ///     it, `req.scope` opens it on first use, and a route that resolves nothing opens none.
    public init(container: Container, showsErrorDetails: Bool = false, bindsCurrentScope: Bool = true) {
        self.init(parent: container.root, showsErrorDetails: showsErrorDetails, bindsCurrentScope: bindsCurrentScope)
    }

    /// A middleware whose request scopes are children of `parent`: a scope of overrides in a test, or a
    /// scope per tenant.
    /// - Parameters:
    ///   - parent: The scope to open the request scopes from.
    ///   - showsErrorDetails: Whether a ``Stimpak/ResolutionError``'s message goes into the 500 response.
    ///   - bindsCurrentScope: Whether the scope is the current one while the handler runs.
    public init(parent: Scope, showsErrorDetails: Bool = false, bindsCurrentScope: Bool = true) {
        settings = StimpakSettings(parent: parent, showsErrorDetails: showsErrorDetails, bindsCurrentScope: bindsCurrentScope)
    }

    init(settings: StimpakSettings) {
        self.settings = settings
    }

    /// Vapor's entry: runs ``respond(to:chainingTo:)-(_,AsyncResponder)`` in a task of its own. When the rest of
    /// the chain is an async route's responder (this middleware is the last of the chain), the route's handler
    /// runs in that same task: AsyncMiddleware's default would call the route through its `EventLoopFuture` API,
    /// which starts a second task and waits for it, two more hops between the event loop and the task pool per
    /// request.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response's future.
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let promise = request.eventLoop.makePromise(of: Response.self)
        promise.completeWithTask {
            let asyncNext = next as? any AsyncResponder ?? AsyncBasicResponder { try await next.respond(to: $0).get() }
            return try await respond(to: request, chainingTo: asyncNext)
        }
        return promise.futureResult
    }

    /// Runs the rest of the chain with the request's scope, and disposes the scope once the response has
    /// been sent (see the type's documentation for every way a request ends).
    /// - Parameters:
    ///   - request: The request; `req.scope` is its scope from here on.
    ///   - next: The rest of the chain.
    /// - Returns: The response, whose release disposes the scope when its body is written later.
    /// - Throws: What the rest of the chain throws; a ``Stimpak/ResolutionError`` as an `Abort` (500).
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let current = settings.current
        let slot = RequestScopeSlot(parent: current.parent)
        request.storage[RequestScopeSlot.Key.self] = slot
        let logger = request.logger
        let response: Response
        do {
            if current.bindsCurrentScope {
                response = try await slot.scope(for: request).withCurrent { try await next.respond(to: request) }
            } else {
                response = try await next.respond(to: request)
            }
        } catch {
            if let scope = slot.close() {
                await RequestScopes.dispose(scope, logger: logger, record: current.record)
            }
            throw abortError(for: error, request: request, showsDetails: current.showsErrorDetails)
        }
        if response.body.isWrittenLater {
            // The body is written after this returns, and may use the scope's instances: the scope is
            // disposed when Vapor releases the response, once written or dropped.
            response.storage[RequestScopeDisposal.Key.self] = RequestScopeDisposal(
                slot: slot, logger: logger, record: current.record)
        } else if let scope = slot.close() {
            await RequestScopes.dispose(scope, logger: logger, record: current.record)
        }
        return response
    }

    /// What the handler's `error` becomes: a ``Stimpak/ResolutionError`` is logged and turned into a 500 that
    /// says what failed (with `showsDetails`); any other error goes on unchanged.
    func abortError(for error: any Error, request: Request, showsDetails: Bool) -> any Error {
        guard let error = error as? ResolutionError else { return error }
        request.logger.error(
            "Stimpak could not resolve \(error.requested) for the request",
            metadata: ["stimpak.error": "\(error)", "stimpak.code": "\(error.code)"])
        let reason =
            showsDetails
            ? "\(error) (request \(request.id))"
            : "Internal server error: a service could not be made (request \(request.id))."
        return Abort(.internalServerError, reason: reason)
    }
}

/// What ``StimpakMiddleware`` reads for each request: shared with `app.stimpak`, so that a test can open the
/// requests' scopes below a scope of its own.
final class StimpakSettings: Sendable {
    struct Current: Sendable {
        /// The scope the request scopes open below.
        var parent: Scope
        var showsErrorDetails: Bool
        var bindsCurrentScope: Bool
        /// Where each request scope's disposal is recorded as it begins and as it ends (the testing helpers
        /// check it).
        var record: RequestScopeRecord?
    }

    private let state: Mutex<Current>

    init(parent: Scope, showsErrorDetails: Bool, bindsCurrentScope: Bool) {
        state = Mutex(Current(parent: parent, showsErrorDetails: showsErrorDetails, bindsCurrentScope: bindsCurrentScope))
    }

    var current: Current { state.withLock { $0 } }

    func update(_ change: (inout Current) -> Void) { state.withLock { change(&$0) } }
}
