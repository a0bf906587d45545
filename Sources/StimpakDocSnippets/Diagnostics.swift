// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of Diagnostics.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Stimpak
import Testing

@Test func registrations() throws {
    try App.container.requireValid()          // fails with every problem listed
}

enum DiagnosticsSnippets {
    static func safetyRules(container: Container) {
        container.register(RequestHandler.self) { scope in RequestHandler(session: try scope.require(Session.self)) }
            .trackDisposableTransients()                  // each handler is disposed with the scope that made it
        container.register(Cache.self, reuse: .singleton) { scope in Cache(sessions: try scope.require(Provider<Session>.self)) }
    }

    static func validation(container: Container) {
        container.register(Session.self, reuse: .inScope) { scope in Session(try scope.require(Database.self)) }
            .dependsOn(Database.self)
        container.registerProvided(HTTPRequest.self)
        let report = container.validate()
        for problem in report.problems { print(problem) }    // each with its path and the fix
    }

    static func graph(container: Container) {
        container.recordsDependencies = true                 // also draw what resolves observe
        let graph = container.dependencyGraph()
        print(graph.dot)                                     // or graph.mermaid
    }

    static func leaks(container: Container) throws {
        container.tracksInstances = true
        let request = container.openScope()
        let session = try request.require(Session.self)
        request.dispose()
        try request.requireNoSurvivors()          // throws: `session` still holds the Session
        _ = session
    }

    static func observing(container: Container) {
        struct SlowCreations: ResolutionObserver {
            func created(_ event: ResolutionEvent) {
                if event.duration > 10_000_000 { print("slow: \(event.service) took \(event.duration / 1_000_000) ms") }
            }
        }

        container.observer = SlowCreations()
    }
}
