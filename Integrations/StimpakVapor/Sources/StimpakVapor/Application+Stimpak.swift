public import Stimpak
package import StimpakServer
public import Vapor

extension Application {
    /// The app's Stimpak container and its request scopes.
    ///
    /// ```swift
    /// app.stimpak.use(container)
    /// app.get("orders") { req async throws in try await req.scope.require(OrderService.self).list() }
    /// ```
    public var stimpak: Stimpak { Stimpak(application: self) }

    /// The app's Stimpak container: `app.stimpak`.
    public struct Stimpak: Sendable {
        /// The app.
        public let application: Application

        struct Key: StorageKey {
            typealias Value = StimpakSettings
        }

        struct ContainerKey: StorageKey {
            typealias Value = Container
        }

        /// The container given to ``use(_:showsErrorDetails:bindsCurrentScope:validatesAtBoot:)``; nil before.
        public var container: Container? { application.storage[ContainerKey.self] }

        /// Makes `container` the app's: adds ``StimpakMiddleware`` to the app's global middleware (so every
        /// route has `req.scope`) and a ``StimpakLifecycleHandler`` (the container validated and its eager
        /// singletons made at boot, disposed at shutdown once the server has drained).
        ///
        /// Call it once, before adding middleware that resolves from `req.scope`: the global middleware runs
        /// in the order it is added. A second call is logged at error level and changes nothing.
        /// - Parameters:
        ///   - container: The container.
        ///   - showsErrorDetails: Whether a ``Stimpak/ResolutionError``'s message goes into the 500 response;
        ///     by default in the development and testing environments only, since it names the app's types.
        ///   - bindsCurrentScope: Whether the request's scope is the current one while the handler runs, so
        ///     that `@Injected` and `inject()` resolve from it (see ``StimpakMiddleware``).
        ///   - validatesAtBoot: Whether boot fails on a validation problem (``Stimpak/Container/validate()``).
        public func use(
            _ container: Container, showsErrorDetails: Bool? = nil, bindsCurrentScope: Bool = true, validatesAtBoot: Bool = true
        ) {
            guard self.container == nil else {
                application.logger.error(
                    "app.stimpak.use(_:) is called a second time: the app keeps its first container. Fix: call it once, in configure(_:).")
                return
            }
            let environment = application.environment
            let settings = StimpakSettings(
                parent: container.root,
                showsErrorDetails: showsErrorDetails ?? (environment == .development || environment == .testing),
                bindsCurrentScope: bindsCurrentScope)
            application.storage[ContainerKey.self] = container
            application.storage[Key.self] = settings
            application.middleware.use(StimpakMiddleware(settings: settings))
            application.lifecycle.use(StimpakLifecycleHandler(container: container, validates: validatesAtBoot))
        }

        /// Opens the request scopes below `parent`, and records each one's disposal in `record`.
        package func openRequestScopes(below parent: Scope, record: RequestScopeRecord?) -> Bool {
            guard let settings = application.storage[Key.self] else { return false }
            settings.update {
                $0.parent = parent
                $0.record = record
            }
            return true
        }
    }
}
