// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of InjectingWithPropertyWrappers.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Stimpak

enum InjectingWithPropertyWrappersSnippets {
    static func overview(container: Container, requestID: Int, httpRequest: HTTPRequest) async throws {
        Container.default = container            // at start-up: the current scope wherever nothing is bound

        final class OrderController {
            @Injected var repository: OrderRepository          // resolved when the controller is made
            @Injected(key: "audit") var log: Logger            // a key (@Injected("audit") works too)
            @LazyInjected var exporter: PDFExporter            // resolved on first access, once
            @WeakInjected var coordinator: Coordinator?        // resolved on first access, held weakly
            @OptionalInjected var analytics: Analytics?        // nil when not registered

            func handle() async throws { try await repository.save(log: log) }
        }

        let request = container.openScope(requestID)
        request.provide(httpRequest)
        try await request.withCurrent {                        // sync and async forms
            try await OrderController().handle()               // every injection below resolves from `request`
        }
        let api = try await inject(Api.self)                   // throws, never stops
        _ = api
    }

    static func asyncRule(container: Container) throws {
        container.register(OrderScreen.self) { OrderScreen() }
            .dependsOn(Injected<OrderRepository>.self, LazyInjected<PDFExporter>.self)
        try container.requireValid()                           // fails if either one's factory is async
    }
}
