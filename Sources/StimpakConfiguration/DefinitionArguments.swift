import Stimpak

/// One argument of a definition: a literal value, or `@name`, a reference to a parameter or a service.
public enum DefinitionArgument: Sendable, Equatable, CustomStringConvertible {
    case value(ConfigurationValue)
    case reference(String)

    public var description: String {
        switch self {
        case .value(let value): return value.description
        case .reference(let name): return "@\(name)"
        }
    }
}

/// The arguments a service's declaration reads to build it: by position, with the type it expects. A reference
/// is resolved when it is read (a service through the container, so it is the shared instance).
public struct DefinitionArguments: @unchecked Sendable {  // only read on the resolving thread, while making
    /// The service being made, by name.
    public let service: String
    let file: String
    let arguments: [DefinitionArgument]
    let namespace: DefinitionNamespace
    /// The scope the service is made in (its factory's scope).
    public let scope: Scope

    /// How many arguments the definition gives.
    public var count: Int { arguments.count }

    /// The argument at `position` as a string: a literal, or a parameter's value (a service is an error).
    public func string(_ position: Int) throws -> String { try literal(position, as: String.self) }
    /// The argument at `position` as an integer.
    public func int(_ position: Int) throws -> Int { try literal(position, as: Int.self) }
    /// The argument at `position` as a number (an integer is accepted).
    public func double(_ position: Int) throws -> Double {
        if case .value(.int(let number)) = try parameter(position) { return Double(number) }
        return try literal(position, as: Double.self)
    }
    /// The argument at `position` as a boolean.
    public func bool(_ position: Int) throws -> Bool { try literal(position, as: Bool.self) }

    /// A literal's or a parameter's value (or object) as `T`.
    private func literal<T>(_ position: Int, as type: T.Type) throws -> T {
        switch try parameter(position) {
        case .value(let value):
            guard let typed = value.plain as? T else {
                throw ConfigurationError(
                    .wrongType, file: file, path: path(position),
                    detail: "the service \(service) reads argument \(position) as \(T.self), but the file has \(value.kind) (\(value))")
            }
            return typed
        case .object(let object):
            guard let typed = object as? T else { throw storedObject(object, readAs: "\(T.self)", at: position) }
            return typed
        }
    }

    /// The argument at `position` as the file's value (a literal, or a referenced parameter's value).
    /// - Throws: ``ConfigurationError`` `wrongType` when it refers to an object set in code, which no file holds.
    public func raw(_ position: Int) throws -> ConfigurationValue {
        switch try parameter(position) {
        case .value(let value): return value
        case .object(let object): throw storedObject(object, readAs: "a file's value", at: position)
        }
    }

    /// A literal, or the parameter a reference names.
    private func parameter(_ position: Int) throws -> DefinitionNamespace.Parameter {
        switch try argument(position) {
        case .value(let value): return .value(value)
        case .reference(let name): return try namespace.parameterValue(name, usedBy: service, at: path(position), file: file)
        }
    }

    /// The argument at `position`, a reference to `object`, is not what the service reads.
    private func storedObject(_ object: any Sendable, readAs expected: String, at position: Int) -> ConfigurationError {
        ConfigurationError(
            .wrongType, file: file, path: path(position),
            detail: "the service \(service) reads argument \(position) as \(expected), but \(arguments[position]) is a \(Swift.type(of: object)) set in code")
    }

    /// The argument at `position` as `T`: a literal, a parameter's value or an object set in code of that type,
    /// or a referenced service's instance.
    public func value<T>(_ position: Int, as type: T.Type = T.self) throws -> T {
        let argument = try argument(position)
        if case .reference(let name) = argument, namespace.isService(name) {
            let instance = try namespace.resolve(name, from: scope, usedBy: service, at: path(position), file: file)
            guard let typed = instance as? T else {
                throw ConfigurationError(
                    .wrongType, file: file, path: path(position),
                    detail: "the service \(service) reads argument \(position) as \(T.self), but @\(name) is a \(Swift.type(of: instance))")
            }
            return typed
        }
        return try literal(position, as: T.self)
    }

    /// The service referred to at `position` (`@name`), as `T`: a service's instance, or an object set in code
    /// (an instance made already, as Dose's `app["direct1"] = Service1(...)`).
    public func service<T>(_ position: Int, as type: T.Type = T.self) throws -> T {
        guard case .reference(let name) = try argument(position) else {
            throw ConfigurationError(
                .wrongKind, file: file, path: path(position),
                detail: "the service \(service) reads argument \(position) as a service (@name), but it is a literal value")
        }
        if !namespace.isService(name), case .value = try parameter(position) {
            throw ConfigurationError(
                .wrongKind, file: file, path: path(position),
                detail: "the service \(service) reads argument \(position) as a service, but @\(name) is a parameter")
        }
        return try value(position, as: T.self)
    }

    private func argument(_ position: Int) throws -> DefinitionArgument {
        guard arguments.indices.contains(position) else {
            throw ConfigurationError(
                .missingArgument, file: file, path: path(position),
                detail: "the service \(service) reads argument \(position), but its definition has \(arguments.count)")
        }
        return arguments[position]
    }

    private func path(_ position: Int) -> String { "services.\(service).arguments[\(position)]" }
}
