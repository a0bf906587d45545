import Foundation
import Stimpak

/// The names that definitions define (parameters, services, extensions), apart from the container: the
/// container's registrations hold it strongly, so a service resolves as long as its registration exists, and
/// it holds no container, so no cycle keeps a container alive.
final class DefinitionNamespace: @unchecked Sendable {  // every stored property is guarded by `lock`
    /// A named service: its definition, and how to resolve it.
    struct Record {
        let definition: ServiceDefinition
        let resolve: @Sendable (Scope) throws -> Any
    }

    /// A parameter: a value a file can hold, or an object set in code, kept as it is (Dose's
    /// `app["direct1"] = Service1(...)`).
    enum Parameter: Sendable {
        case value(ConfigurationValue)
        case object(any Sendable)

        /// A value set in code: a file's kind of value when it is one, the object itself otherwise.
        init(_ value: any Sendable) {
            if let converted = ConfigurationValue(value) {
                self = .value(converted)
            } else {
                self = .object(value)
            }
        }

        /// What `get` hands out: the plain Swift value, or the object.
        var plain: Any {
            switch self {
            case .value(let value): return value.plain
            case .object(let object): return object
            }
        }
    }

    typealias Extension = @Sendable (Any, DefinitionContext) throws -> Any

    private let lock = NSLock()
    private var parameters: [String: (value: Parameter, file: String)] = [:]
    private var services: [String: Record] = [:]
    private var extensions: [String: [Extension]] = [:]

    /// Runs `body` with the lock held, on the parameters and the services.
    func withLock<T>(
        _ body: (inout [String: (value: Parameter, file: String)], inout [String: Record]) throws -> T
    ) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&parameters, &services)
    }

    func addExtension(_ wrap: @escaping Extension, to name: String) {
        lock.lock()
        extensions[name, default: []].append(wrap)
        lock.unlock()
    }

    /// `instance` after every extension of `name`, in the order they were added.
    func extended(_ name: String, _ instance: Any, in scope: Scope) throws -> Any {
        lock.lock()
        let wraps = extensions[name] ?? []
        lock.unlock()
        var instance = instance
        let context = DefinitionContext(namespace: self, name: name, scope: scope)
        for wrap in wraps { instance = try wrap(instance, context) }
        return instance
    }

    /// A parameter's value or a service's instance resolved from `scope`, by name.
    func get(_ name: String, from scope: Scope) throws -> Any {
        let (parameter, service) = withLock { parameters, services in (parameters[name], services[name]) }
        if let parameter { return parameter.value.plain }
        guard let service else {
            throw ConfigurationError(.unknownName, file: "", path: name, detail: "nothing is defined under the name \(name)")
        }
        return try unwrapped { try service.resolve(scope) }
    }

    /// A parameter's value or a service's instance resolved from `scope`, by name, as `T`.
    func get<T>(_ name: String, as type: T.Type, from scope: Scope) throws -> T {
        let value = try get(name, from: scope)
        guard let typed = value as? T else {
            throw ConfigurationError(
                .wrongType, file: "", path: name, detail: "\(name) is a \(Swift.type(of: value)), not a \(T.self)")
        }
        return typed
    }

    /// A factory's `ConfigurationError`, which the container wraps, handed out as it is.
    private func unwrapped<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ResolutionError {
            if error.code == .factoryFailed, let cause = error.underlyingError as? ConfigurationError { throw cause }
            throw error
        }
    }

    func isService(_ name: String) -> Bool {
        withLock { _, services in services[name] != nil }
    }

    func parameterValue(_ name: String, usedBy service: String, at path: String, file: String) throws -> Parameter {
        let (parameter, isService) = withLock { parameters, services in (parameters[name], services[name] != nil) }
        if let parameter { return parameter.value }
        if isService {
            throw ConfigurationError(
                .wrongKind, file: file, path: path, detail: "\(service) reads @\(name) as a value, but it is a service")
        }
        throw ConfigurationError(.unknownReference, file: file, path: path, detail: "@\(name) names no parameter and no service")
    }

    func resolve(_ name: String, from scope: Scope, usedBy service: String, at path: String, file: String) throws -> Any {
        guard let record = withLock({ _, services in services[name] }) else {
            throw ConfigurationError(.unknownReference, file: file, path: path, detail: "@\(name) names no parameter and no service")
        }
        return try record.resolve(scope)
    }
}
