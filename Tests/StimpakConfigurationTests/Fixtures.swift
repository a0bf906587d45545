import Foundation
import Stimpak
import StimpakConfiguration

// The types of Dose's README and tests, declared as a Stimpak program declares the types its files name.

protocol LoggerProtocol: AnyObject, Sendable {
    func isDebugOutputEnabled() -> Bool
}

final class SimpleLogger: LoggerProtocol, @unchecked Sendable {
    let debug: Bool
    init(_ debug: Bool) { self.debug = debug }
    func isDebugOutputEnabled() -> Bool { debug }
}

/// Dose's `Service1`: `name` from its first argument, `subname` from its third when there is one.
final class Service1: DefinedService, @unchecked Sendable {
    let name: String
    let subname: String
    init(arguments: DefinitionArguments) throws {
        name = try arguments.string(0)
        subname = arguments.count > 2 ? try arguments.string(2) : try arguments.string(1)
    }
}

/// Dose's `Service2` of the README: a name and a `Service1`.
final class ReadmeService2: DefinedService, @unchecked Sendable {
    let name: String
    let service1: Service1
    init(arguments: DefinitionArguments) throws {
        name = try arguments.string(0)
        service1 = try arguments.service(1, as: Service1.self)
    }
}

/// Dose's `Service2` of its tests: three strings and a `Service1`.
final class Service2: DefinedService, @unchecked Sendable {
    let name: String
    init(arguments: DefinitionArguments) throws {
        let first = try arguments.string(0)
        let second = try arguments.string(1)
        let third = try arguments.string(2)
        let service1 = try arguments.service(3, as: Service1.self)
        name = "Plop! \(first) \(second) \(third) - \(service1.name) - \(service1.subname)"
    }
}

/// Dose's `Service3`: a logger and a name.
final class Service3: DefinedService, @unchecked Sendable {
    let logger: any LoggerProtocol
    let name: String
    init(arguments: DefinitionArguments) throws {
        logger = try arguments.service(0, as: (any LoggerProtocol).self)
        name = try arguments.string(1)
    }
}

/// Dose's `SimpleLoggerProvider`: the `logger` service, from the `debug_output` parameter.
struct SimpleLoggerProvider: DefinitionProvider {
    func register(in definitions: Definitions) {
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

/// The declarations the tests' files may name.
let doseTypes = ServiceTypes()
    .type("DoseTests.Service1", Service1.self)
    .type("DoseTests.Service2", Service2.self)
    .type("DoseTests.Service3", Service3.self)

let readmeTypes = ServiceTypes()
    .type("DoseTests.Service1", Service1.self)
    .type("DoseTests.Service2", ReadmeService2.self)
