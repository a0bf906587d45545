import Foundation
import Stimpak
import StimpakTestSupport
import StimpakConfiguration

// Dose's README and tests (github.com/Plopix/Dose), ported as a Dose user would through the migration table:
// its definition files verbatim, its services and providers. Nested in `Dose` so that the other seeds' fixtures
// of this target may use the same names.
enum Dose {
    /// Dose's `LoggerProtocol`.
    protocol LoggerProtocol: AnyObject, Sendable {
        func isDebugOutputEnabled() -> Bool
    }

    /// Dose's `SimpleLogger`.
    final class SimpleLogger: LoggerProtocol {
        let debugOutput: Bool
        init(_ debugOutput: Bool) { self.debugOutput = debugOutput }
        func isDebugOutputEnabled() -> Bool { debugOutput }
    }

    /// Dose's `Service1`: `name` from its first argument, `subname` from its third when that is a string.
    final class Service1: DefinedService, Sendable {
        /// Dose's `Service1` reads `args[0]`, and `args[2]` when there are three.
        static let argumentCounts = 1...3

        let name: String
        let subname: String

        init(name: String, subname: String = "EMPTY SUBNAME") {
            self.name = name
            self.subname = subname
        }

        init(arguments: DefinitionArguments) throws {
            name = try arguments.string(0)
            if arguments.count >= 3, case .string(let subname) = try arguments.raw(2) {
                self.subname = subname
            } else {
                subname = "EMPTY SUBNAME"
            }
        }
    }

    /// The `Service2` of Dose's README: a name and the `Service1` it is given.
    final class ReadmeService2: DefinedService, Sendable {
        static let argumentCounts = 2...2

        let name: String
        let service1: Service1

        init(arguments: DefinitionArguments) throws {
            name = try arguments.string(0)
            service1 = try arguments.service(1, as: Service1.self)
        }
    }

    /// The `Service2` of Dose's tests: three strings and a `Service1`.
    final class Service2: DefinedService, Sendable {
        static let argumentCounts = 4...4

        let name: String

        init(arguments: DefinitionArguments) throws {
            let first = try arguments.string(0)
            let second = try arguments.string(1)
            let third = try arguments.string(2)
            let service1 = try arguments.service(3, as: Service1.self)
            name = "Plop! \(first) \(second) \(third) - \(service1.name) - \(service1.subname)"
        }
    }

    /// The `Service3` of Dose's README and tests: a logger, then a name.
    final class Service3: DefinedService, Sendable {
        static let argumentCounts = 2...2

        let logger: any LoggerProtocol
        let name: String

        init(arguments: DefinitionArguments) throws {
            logger = try arguments.service(0, as: (any LoggerProtocol).self)
            name = try arguments.string(1)
        }
    }

    /// Dose's `DeviceInformation`.
    final class DeviceInformation: Sendable {}

    /// Dose's `SimpleLoggerProvider`: the `logger` service, made from the `debug_output` parameter.
    struct SimpleLoggerProvider: DefinitionProvider {
        func register(in definitions: Definitions) {
            definitions.register("logger", as: (any LoggerProtocol).self) { context in
                SimpleLogger(try context.parameter("debug_output", as: Bool.self))
            }
        }
    }

    /// A provider as Silex writes them: it sets its parameters' defaults in `register`, and the values given to
    /// `register($provider, $values)` win over them.
    struct DefaultingLoggerProvider: DefinitionProvider {
        func register(in definitions: Definitions) throws {
            try definitions.setParameter("debug_output", false)
            definitions.register("logger", as: (any LoggerProtocol).self) { context in
                SimpleLogger(try context.parameter("debug_output", as: Bool.self))
            }
        }
    }

    /// Dose's `ExampleServiceProvider`: the `exampleParam` parameter.
    struct ExampleServiceProvider: DefinitionProvider {
        func register(in definitions: Definitions) throws {
            try definitions.setParameter("exampleParam", "FromExampleServiceProvider")
        }
    }

    /// Dose's `SimpleDeviceInformationProvider`: `attach("device_information")`.
    struct SimpleDeviceInformationProvider: DefinitionProvider {
        func register(in definitions: Definitions) {
            definitions.register("device_information") { _ in DeviceInformation() }
        }
    }

    /// The types Dose's test files name.
    static let types = ServiceTypes()
        .type("DoseTests.Service1", Service1.self)
        .type("DoseTests.Service2", Service2.self)
        .type("DoseTests.Service3", Service3.self)

    /// The types the README's file names.
    static let readmeTypes = ServiceTypes()
        .type("DoseTests.Service1", Service1.self)
        .type("DoseTests.Service2", ReadmeService2.self)

    /// Dose's README, "A dose of a definition", as the README shows it (indentation and all).
    static let readmePlist = doseReadmePlist

    /// The same definitions in JSON.
    static let readmeJSON = #"""
        {
          "parameters": { "debug_output": true, "lambdakey": "A VALUE" },
          "services": {
            "dose.service1": { "class": "DoseTests.Service1", "arguments": ["@lambdakey", "An argument"] },
            "dose.service2": { "class": "DoseTests.Service2", "arguments": ["Second Service", "@dose.service1"] }
          }
        }
        """#

    /// Dose's DoseTests/services.plist.
    static let testsPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>parameters</key>
        \t<dict>
        \t\t<key>debug_output</key>
        \t\t<false/>
        \t\t<key>lambdakey</key>
        \t\t<string>Plopix</string>
        \t</dict>
        \t<key>services</key>
        \t<dict>
        \t\t<key>dose.service3</key>
        \t\t<dict>
        \t\t\t<key>class</key>
        \t\t\t<string>DoseTests.Service3</string>
        \t\t\t<key>arguments</key>
        \t\t\t<array>
        \t\t\t\t<string>@logger</string>
        \t\t\t\t<string>Service3</string>
        \t\t\t</array>
        \t\t</dict>
        \t\t<key>dose.service1</key>
        \t\t<dict>
        \t\t\t<key>class</key>
        \t\t\t<string>DoseTests.Service1</string>
        \t\t\t<key>arguments</key>
        \t\t\t<array>
        \t\t\t\t<string>@lambdakey</string>
        \t\t\t\t<string>One</string>
        \t\t\t\t<string>Third Argument</string>
        \t\t\t</array>
        \t\t</dict>
        \t\t<key>dose.service2</key>
        \t\t<dict>
        \t\t\t<key>class</key>
        \t\t\t<string>DoseTests.Service2</string>
        \t\t\t<key>arguments</key>
        \t\t\t<array>
        \t\t\t\t<string>Second Service</string>
        \t\t\t\t<string>Need the One</string>
        \t\t\t\t<string>@exampleParam</string>
        \t\t\t\t<string>@dose.service1</string>
        \t\t\t</array>
        \t\t</dict>
        \t</dict>
        </dict>
        </plist>

        """

    /// Dose's `TKernel.bootstrap()`: the tests' file, then the two providers, the logger's with an override.
    static func kernel() throws -> Definitions {
        let definitions = Definitions(types: types, environment: [:])
        try definitions.load(Data(testsPlist.utf8), name: "services.plist")
        try definitions.install(SimpleLoggerProvider(), parameters: ["debug_output": true])
        try definitions.install(ExampleServiceProvider())
        return definitions
    }

    /// Counts what a test makes (each test its own, as Swift Testing runs tests in parallel).
    final class Counter: @unchecked Sendable {  // `made` is guarded by `lock`
        private let lock = NSLock()
        private var made = 0
        func increment() { lock.withLock { made += 1 } }
        var count: Int { lock.withLock { made } }
    }
}
