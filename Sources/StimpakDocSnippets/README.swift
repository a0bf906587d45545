// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The README's snippets. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak

enum ReadmeSnippets {
    static func quickStart(requestID: Int, httpRequest: HTTPRequest) throws {
        let container = Container()
        container.register(ConnectionPool.self, reuse: .singleton) { ConnectionPool() }
        container.register(Session.self, reuse: .inScope) { scope in Session(pool: try scope.require(ConnectionPool.self)) }

        let request = container.openScope(requestID)        // any Hashable key
        request.provide(httpRequest)                        // a value that resolves in this scope and below
        let session = try request.require(Session.self)     // `resolve` returns an Optional instead
        request.dispose()                                   // disposes the scope's instances, newest first
        _ = session
    }

    static func scopesPerRequest(container: Container) async throws {
        struct UserSession: Hashable { let user: Int }

        container.register(ConnectionPool.self, reuse: .singleton) { ConnectionPool() }      // one for the container
        container.register(ShoppingCart.self, reuse: .scopedTo(UserSession.self)) { ShoppingCart() }   // one per user
        container.register(Session.self, reuse: .inScope) { scope in                          // one per request
            Session(pool: try scope.require(ConnectionPool.self))
        }
        container.autowire(OrderHandler.self, OrderHandler.init)                             // a new one each time

        final class OrderController {
            @Injected var handler: OrderHandler          // resolved from the current scope when the controller is made
            @Injected var request: HTTPRequest            // the request's own value

            func respond() async throws -> String { try await handler.handle(request) }
        }

        func serve(_ httpRequest: HTTPRequest, for user: UserSession) async throws -> String {
            try await container.openScope(user).withScope { request in    // a fresh request scope below the session
                request.provide(httpRequest)
                return try await request.withCurrent { try await OrderController().respond() }
            }                                                               // disposed however the body ends
        }
        _ = try await serve(HTTPRequest(path: "/"), for: UserSession(user: 1))
    }

    @MainActor static func actors(container: Container, screen: Scope) throws {
        container.register(SettingsModel.self, reuse: .inScope, onMainActor: { SettingsModel() })
        let model = try screen.require(SettingsModel.self)          // on the main actor: synchronous
        _ = model
    }
}
