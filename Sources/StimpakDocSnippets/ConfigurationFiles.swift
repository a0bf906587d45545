// swift-format-ignore-file
// (the snippets keep their documents' layout: aligned comments, long lines)
// The snippets of ConfigurationFiles.md. Each is copied verbatim from its document (.ci/check-doc-snippets.swift checks it),
// inside a function so that it compiles; what follows a snippet only uses what it made.
import Foundation
import Stimpak
import StimpakConfiguration

final class SMTPTransport: DefinedService, Sendable {
    static let argumentCounts = 2...2   // a definition that gives another count is refused when its file loads
    let host: String
    let port: Int
    init(arguments: DefinitionArguments) throws {
        host = try arguments.string(0)
        port = try arguments.int(1)
    }
}

struct LoggerProvider: DefinitionProvider {
    func register(in definitions: Definitions) {
        definitions.register("logger", as: SimpleLogger.self) { context in
            SimpleLogger(debug: try context.parameter("debug_output", as: Bool.self))
        }
    }
}

enum ConfigurationFilesSnippets {
    static func overview() throws {
        // Swift cannot make a type from its name: the program declares, one line each, the types a file may name.
        let types = ServiceTypes()
            .type("Shop.SMTPTransport", SMTPTransport.self)          // SMTPTransport: DefinedService, init(arguments:)
            .type("Shop.OrderNotifier") { arguments in OrderNotifier(mailer: try arguments.service(0, as: Mailer.self)) }

        let definitions = Definitions(types: types)                   // or Definitions(container: existing, types:)
        try definitions.load(contentsOf: URL(fileURLWithPath: "services.plist"))
        try definitions.load(contentsOf: URL(fileURLWithPath: "production.json"))   // later files win
        try definitions.install(LoggerProvider(), parameters: ["debug_output": true])   // Dose's providers, overrides
        definitions.extend("mail.mailer", as: Mailer.self) { mailer, _ in mailer.configured() }

        let notifier = try definitions.get("orders.notifier", as: OrderNotifier.self)   // by name, made now
        let mailer = try definitions.container.require(Mailer.self, key: "mail.mailer")  // a registration like any other
        _ = (notifier, mailer)
    }
}
