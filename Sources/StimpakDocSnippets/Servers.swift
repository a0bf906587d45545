// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The Servers article's snippets, verbatim (.ci/check-doc-snippets.swift checks it), each inside a function.
import Stimpak

enum ServersSnippets {
    static func requestScope(container: Container, httpRequest: HTTPRequest, requestID: Int) async throws -> String {
        let body = try await container.withScope(onDisposalFailures: { failures in
            for failure in failures { print("request \(requestID): \(failure)") }
        }) { request in
            request.provide(httpRequest)
            return try await request.withCurrent { try await request.require(Session.self).handle(httpRequest) }
        }
        return body
    }

    static func ownScope(container: Container, httpRequest: HTTPRequest, requestID: Int) async throws -> String {
        let request = container.openScope(requestID, sharing: .never)   // this request's own, whatever another sends
        request.provide(httpRequest)
        let reply = try await request.require(Session.self).handle(httpRequest)
        await request.dispose()
        return reply
    }

    static func wrapperDeclarations(container: Container) {
        container.register(OrderScreen.self) { OrderScreen() }
            .dependsOn(Injected<OrderRepository>.self, LazyInjected<PDFExporter>.self)
    }

    static func asyncServices(container: Container, request: Scope) async throws {
        container.register(Session.self, reuse: .inScope) { (scope: Scope) async throws in
            Session(pool: try await scope.require(ConnectionPool.self))
        }
        container.autowire(OrderLedger.self, reuse: .inScope, OrderLedger.init)   // init(session: Session) async
        let ledger = try await request.require(OrderLedger.self)
        _ = ledger
    }

    static func tests(container: Container) {
        struct FakePayments: ScopeModule {
            func register(in scope: Scope) {
                scope.register((any PaymentGateway).self, reuse: .singleton) { FakeGateway(declines: true) }
            }
        }

        let test = container.openScope()
        test.install(FakePayments())
        test.dispose()
    }

    static func shuttingDown(container: Container) async {
        func shutDown() async -> [DisposalFailure] { await container.dispose() }
        let failures = await shutDown()
        _ = failures
    }
}
