public import Hummingbird
public import Logging
public import Stimpak
public import StimpakServer

/// Opens an anonymous Stimpak scope for each request, below the container (or a scope of your own), binds it as
/// the current scope for the handler, and disposes it, awaiting its asynchronous hooks, once the response has
/// been written.
///
/// ```swift
/// let router = Router(context: BasicStimpakRequestContext.self)
/// router.add(middleware: StimpakMiddleware(container: container))
/// router.get("/orders") { request, context in
///     try await context.scope.require(OrderService.self).list()
/// }
/// ```
/// The scope holds the request's values, which resolve there and in nothing else: the `Request`, its
/// ``RequestIdentifier`` and the `Logger` that carries the request's metadata. It is disposed exactly once,
/// however the request ends: when the handler returns a body already in memory, after the last byte of a
/// body streamed after the handler returned, when the handler throws, and when the client disconnects
/// (the write fails, or the response is dropped unwritten). Disposal failures are logged at error level
/// through the request's logger, so with its request id. A ``Stimpak/ResolutionError`` thrown by the handler
/// is logged at error level and becomes a 500 whose message says what failed when `showsErrorDetails` is on
/// (in development), and only the request id otherwise.
public struct StimpakMiddleware<Context: StimpakRequestContext>: RouterMiddleware {
    /// The scope whose children the request scopes are: the container's root, or a test's scope.
    public let parent: Scope
    /// Whether a resolution error's message goes into the response (in development) or only into the log.
    public let showsErrorDetails: Bool
    let record: RequestScopeRecord?

    /// A middleware whose request scopes are children of `container`'s root.
    /// - Parameters:
    ///   - container: The container.
    ///   - showsErrorDetails: Whether a ``Stimpak/ResolutionError``'s message goes into the 500 response; on
    ///     in development only, since it names the app's types.
    public init(container: Container, showsErrorDetails: Bool = false) {
        self.init(parent: container.root, showsErrorDetails: showsErrorDetails)
    }

    /// A middleware whose request scopes are children of `parent`: a scope of overrides in a test, or a scope
    /// per tenant.
    /// - Parameters:
    ///   - parent: The scope to open the request scopes from.
    ///   - showsErrorDetails: Whether a ``Stimpak/ResolutionError``'s message goes into the 500 response.
    ///   - record: Where each request scope's disposal is recorded as it begins and as it ends (the testing
    ///     helpers check it).
    public init(parent: Scope, showsErrorDetails: Bool = false, record: RequestScopeRecord? = nil) {
        self.parent = parent
        self.showsErrorDetails = showsErrorDetails
        self.record = record
    }

    /// Runs the rest of the chain in a new request scope, and disposes the scope once the response is
    /// written (see the type's documentation for every way a request ends).
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Its context; the rest of the chain gets a copy whose ``StimpakRequestContext/scope`` is set.
    ///   - next: The rest of the chain.
    /// - Returns: The response, whose body disposes the scope once written when it is written later.
    /// - Throws: What the rest of the chain throws; a ``Stimpak/ResolutionError`` as an `HTTPError` (500).
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let scope = parent.openScope()
        let logger = context.logger
        scope.provideRequestValues(request: request, id: RequestIdentifier(logger: logger), logger: logger)
        var context = context
        context.stimpak.scope = scope
        var response: Response
        do {
            response = try await scope.withCurrent { try await next(request, context) }
        } catch {
            await RequestScopes.dispose(scope, logger: logger, record: record)
            throw httpError(for: error, logger: logger)
        }
        guard response.body.isWrittenLater else {
            await RequestScopes.dispose(scope, logger: logger, record: record)
            return response
        }
        // The body is written after this returns, and may use the scope's instances: the scope is disposed
        // once it has been written, or when the response is dropped unwritten.
        let disposal = RequestScopeDisposal(scope: scope, logger: logger, record: record)
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            do {
                try await scope.withCurrent { try await body.write(writer) }
            } catch {
                // The head is sent: the error can no longer become a 500, and Hummingbird logs a failed write at
                // trace level only. A resolution error is logged here, at error level, with the request id.
                if let error = error as? ResolutionError { Self.log(error, whileWritingBodyTo: logger) }
                await disposal.run()
                throw error
            }
            await disposal.run()
        }
        return response
    }

    /// Logs a resolution error thrown while a streamed body was written, after the response's head was sent.
    static func log(_ error: ResolutionError, whileWritingBodyTo logger: Logger) {
        logger.error(
            "Stimpak could not resolve \(error.requested) while writing the response body; the response is cut short",
            metadata: ["stimpak.error": "\(error)", "stimpak.code": "\(error.code)"])
    }

    /// What the handler's `error` becomes: a ``Stimpak/ResolutionError`` is logged and turned into a 500 that
    /// says what failed (with ``showsErrorDetails``); any other error goes on unchanged.
    func httpError(for error: any Error, logger: Logger) -> any Error {
        guard let error = error as? ResolutionError else { return error }
        logger.error(
            "Stimpak could not resolve \(error.requested) for the request",
            metadata: ["stimpak.error": "\(error)", "stimpak.code": "\(error.code)"])
        let id = RequestIdentifier(logger: logger)
        let message =
            showsErrorDetails
            ? "\(error) (request \(id))" : "Internal server error: a service could not be made (request \(id))."
        return HTTPError(.internalServerError, message: message)
    }
}

extension Scope {
    /// Provides what ``StimpakMiddleware`` provides into a request's scope: the request, its id and its logger.
    ///
    /// For a scope made by hand: a test's sample request scope, validation.
    /// - Parameters:
    ///   - request: The request.
    ///   - id: Its id.
    ///   - logger: The logger with the request's metadata.
    public func provideRequestValues(request: Request, id: RequestIdentifier, logger: Logger) {
        provide(request)
        provide(id)
        provide(logger)
    }
}

extension RequestIdentifier {
    /// The id Hummingbird put in the request logger's metadata (`hb.request.id`), or "unknown".
    init(logger: Logger) {
        self.init(logger[metadataKey: "hb.request.id"]?.description ?? "unknown")
    }
}
