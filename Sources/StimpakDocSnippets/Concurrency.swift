// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of Concurrency.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak

enum ConcurrencySnippets {
    static func overview(container: Container, request: Scope, url: URL) async throws {
        container.register(Database.self, reuse: .singleton) { try await Database.connect(url) }
        container.register(Feed.self, reuse: .inScope) { (scope: Scope) async throws in
            Feed(db: try await scope.require(Database.self), user: try await scope.require(User.self))
        }
        container.register(Avatar.self) { (url: URL) async throws in try await Avatar.download(url) }

        let feed = try await request.require(Feed.self)           // every resolve form has an async twin
        let avatar = await request.resolve(Avatar.self, url)      // nil on failure, as the synchronous one
        try await container.makeEagerSingletons()                 // awaits async eager singletons too
        _ = (feed, avatar)
    }

    static func waitLimit() {
        let container = Container(waitLimit: .seconds(5))         // or .milliseconds(500), .unlimited
        _ = container
    }

    static func structuredScopes(container: Container, httpRequest: HTTPRequest) async throws {
        let response = try await container.withScope { request in    // anonymous: never shared
            request.provide(httpRequest)
            return try await request.withCurrent { try await Router().respond() }
        }                                                             // disposed, async hooks awaited
        _ = response
    }

    static func actors(container: Container) {
        container.register(SettingsModel.self, reuse: .inScope, onMainActor: { SettingsModel() })
        container.register(CartModel.self, reuse: .inScope, onMainActor: { (scope: Scope) in
            CartModel(store: try scope.require(CartStore.self))
        })

        @MainActor func showSettings(in screen: Scope) throws -> SettingsModel {
            try screen.require(SettingsModel.self)                    // on the main actor: synchronous
        }

        func loadCart(in screen: Scope) async throws -> CartModel {
            try await screen.require(CartModel.self)                  // anywhere else: made on the main actor
        }
    }
}
