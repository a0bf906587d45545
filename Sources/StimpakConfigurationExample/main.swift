// Loads a definition file (Dose's plist format, or JSON) into a Stimpak container and uses its services.
//
//   swift run stimpak-config-example                              # Examples/services.plist
//   swift run stimpak-config-example Examples/broken.json         # what a broken file says
//   SMTP_HOST=mail.example swift run stimpak-config-example       # a parameter from the environment
import Foundation
import Stimpak
import StimpakConfiguration

final class SMTPTransport: DefinedService, Sendable {
    let host: String
    let port: Int
    init(arguments: DefinitionArguments) throws {
        host = try arguments.string(0)
        port = try arguments.int(1)
    }
}

final class Mailer: DefinedService, Sendable {
    let transport: SMTPTransport
    let sender: String
    init(arguments: DefinitionArguments) throws {
        transport = try arguments.service(0, as: SMTPTransport.self)
        sender = try arguments.string(1)
    }
}

struct OrderNotifier: Sendable {
    let mailer: Mailer
    func notify(order: Int) -> String {
        "order \(order): mail from \(mailer.sender) via \(mailer.transport.host):\(mailer.transport.port)"
    }
}

// The types the file may name: one line each.
let types = ServiceTypes()
    .type("Shop.SMTPTransport", SMTPTransport.self)
    .type("Shop.Mailer", Mailer.self)
    .type("Shop.OrderNotifier") { arguments in OrderNotifier(mailer: try arguments.service(0, as: Mailer.self)) }

let path = CommandLine.arguments.dropFirst().first ?? "Examples/services.plist"
let definitions = Definitions(types: types)
do {
    try definitions.load(contentsOf: URL(fileURLWithPath: path))
    let problems = definitions.validate()
    for problem in problems { print("problem: \(problem)") }
    print("Defined: \(definitions.names.joined(separator: ", "))")
    print("Tagged mail: \(definitions.services(taggedWith: "mail").joined(separator: ", "))")
    let notifier = try definitions.get("orders.notifier", as: OrderNotifier.self)
    print(notifier.notify(order: 42))
    let mailer = try definitions.container.require(Mailer.self, key: "mail.mailer")
    print("The notifier's mailer is the container's mail.mailer: \(mailer === notifier.mailer)")
} catch {
    print("error: \(error)")
    exit(1)
}
