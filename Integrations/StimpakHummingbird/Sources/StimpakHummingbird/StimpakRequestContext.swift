public import Hummingbird
public import Stimpak

/// A request context that carries the request's Stimpak scope, opened by ``StimpakMiddleware``: handlers
/// resolve from `context.scope`.
///
/// Conform a context of your own by storing a ``StimpakRequestContextStorage``, as Hummingbird's contexts store
/// their `coreContext`:
///
/// ```swift
/// struct AppContext: StimpakRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var stimpak = StimpakRequestContextStorage()
///     init(source: Source) { coreContext = .init(source: source) }
/// }
/// ```
/// or use ``BasicStimpakRequestContext``.
public protocol StimpakRequestContext: RequestContext {
    /// Where ``StimpakMiddleware`` keeps the request's scope.
    var stimpak: StimpakRequestContextStorage { get set }
}

/// The Stimpak values of a request context: the request's scope, once ``StimpakMiddleware`` has opened it.
public struct StimpakRequestContextStorage: Sendable {
    /// The request's scope; nil until the middleware opens it.
    public internal(set) var scope: Scope?

    /// Storage with no scope yet: the middleware sets it.
    public init() {}
}

extension StimpakRequestContext {
    /// The request's scope: a child of the container opened for this request alone, disposed when the
    /// response has been written.
    ///
    /// ```swift
    /// router.get("/orders") { request, context in
    ///     try await context.scope.require(OrderService.self).list()
    /// }
    /// ```
    /// - Throws: ``MissingRequestScope`` when ``StimpakMiddleware`` is not on the route: a 500 that names it.
    public var scope: Scope {
        get throws(MissingRequestScope) {
            guard let scope = stimpak.scope else { throw MissingRequestScope(endpoint: endpointPath) }
            return scope
        }
    }
}

/// A request context with a Stimpak scope and nothing else: Hummingbird's `BasicRequestContext` plus
/// ``StimpakRequestContext``.
///
/// ```swift
/// let router = Router(context: BasicStimpakRequestContext.self)
/// router.add(middleware: StimpakMiddleware(container: container))
/// ```
public struct BasicStimpakRequestContext: StimpakRequestContext {
    /// Hummingbird's own values.
    public var coreContext: CoreRequestContextStorage
    /// The request's scope.
    public var stimpak: StimpakRequestContextStorage

    /// A context for a request that `source` describes.
    /// - Parameter source: The channel and logger of the request.
    public init(source: Source) {
        coreContext = .init(source: source)
        stimpak = StimpakRequestContextStorage()
    }
}

/// `context.scope` read where no ``StimpakMiddleware`` opened one: an internal server error whose message
/// says to add the middleware.
public struct MissingRequestScope: HTTPResponseError, CustomStringConvertible {
    /// The route's path, if the router matched one.
    public let endpoint: String?

    /// 500: the app is missing its middleware.
    public var status: HTTPResponse.Status { .internalServerError }

    /// What is missing, and the fix.
    public var description: String {
        "No Stimpak scope for the request to \(endpoint ?? "this route"): StimpakMiddleware opens it."
            + " Fix: add router.add(middleware: StimpakMiddleware(container: container)) before the route."
    }

    /// A 500 whose message is ``description``.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Its context.
    /// - Returns: The response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try HTTPError(.internalServerError, message: description).response(from: request, context: context)
    }
}

/// The id of the request a scope serves: Hummingbird's request id, the one its logger's metadata carries
/// (`hb.request.id`). Provided into every request's scope.
public struct RequestIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The id as Hummingbird writes it.
    public let value: String

    /// An id with `value`.
    /// - Parameter value: The id.
    public init(_ value: String) { self.value = value }

    /// The id.
    public var description: String { value }
}
