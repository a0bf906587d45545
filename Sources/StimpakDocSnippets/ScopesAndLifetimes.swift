// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of ScopesAndLifetimes.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak
import Testing

@Test(arguments: 0..<8)                                    // 8 cases, run in parallel
func checkout(index: Int) async throws {
    try await App.container.withScope("test \(index)") { test in   // the app's real container; disposed at the end
        test.register(PaymentGateway.self, reuse: .singleton) { FakeGateway(declines: index.isMultiple(of: 2)) }
        let checkout = try await test.require(Checkout.self)      // the app's Checkout, with this test's fake
        let receipt = try await test.withCurrent { try await checkout.pay(amount: 30) }
        #expect(receipt.isDeclined == index.isMultiple(of: 2))
    }
}

enum ScopesAndLifetimesSnippets {
    static func overview(container: Container, httpRequest: HTTPRequest) throws {
        container.register(ConnectionPool.self, reuse: .singleton) { ConnectionPool() }
        container.register(Session.self, reuse: .inScope) { scope in Session(pool: try scope.require(ConnectionPool.self)) }

        let response = try container.withScope { request in      // a fresh scope, disposed when the body ends
            request.provide(httpRequest)                         // a value for this scope and below
            let session = try request.require(Session.self)      // made in `request`, shared within it
            return try session.handle(try request.require(HTTPRequest.self))
        }
        _ = response
    }

    static func weak(container: Container) throws {
        container.register(ImageCache.self, reuse: .weak) { ImageCache() }
        let cache = try container.require(ImageCache.self)   // every resolve shares it while `cache` lives
        _ = cache
    }

    static func graph(container: Container) {
        container.register(UnitOfWork.self, reuse: .graph) { UnitOfWork() }
        container.register(Repository.self) { scope in Repository(try scope.require(UnitOfWork.self)) }
        container.register(OrderService.self) { scope in
            OrderService(try scope.require(UnitOfWork.self), try scope.require(Repository.self))   // one UnitOfWork
        }
    }

    static func eagerSingletons(container: Container) throws {
        container.register(Database.self, reuse: .eagerSingleton) { try Database.connect() }
        container.register(Mailer.self, reuse: .eagerSingleton) { scope in Mailer(try scope.require(SMTPSettings.self)) }
        try container.makeEagerSingletons()      // at start-up
    }

    static func scopedTo(container: Container, requestID: Int) throws {
        struct UserSession: Hashable { let user: Int }

        container.register(ShoppingCart.self, reuse: .scopedTo(UserSession.self)) { ShoppingCart() }
        let session = container.openScope(UserSession(user: 42))
        let request = session.openScope(requestID)
        let cart = try request.require(ShoppingCart.self)    // made once in `session`, shared by its requests
        _ = cart
    }

    static func reclaim(request: Scope, session: Session) {
        weak var weakSession: Session?
        weakSession = session
        request.dispose()
        Container.reclaim()
        #expect(weakSession == nil)
    }
}
