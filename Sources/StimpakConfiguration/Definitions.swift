import Foundation
import Stimpak

/// A service of a definition file (or of a provider), as it was defined: fetch it with
/// ``Definitions/definition(of:)`` without making it.
public struct ServiceDefinition: Sendable, Equatable {
    /// Its name: `dose.service2`.
    public let name: String
    /// The declared type's name (`class`).
    public let typeName: String
    /// Its arguments, in order.
    public let arguments: [DefinitionArgument]
    /// How its instances are reused (`singleton` by default, as Dose's lazily made shared services).
    public let reuse: Reuse
    /// The key it is registered under in the container (its name unless the file gives `key`).
    public let key: String
    /// Its tags.
    public let tags: [String]
    /// The file (or provider) that defined it.
    public let file: String
}

/// Code that defines named services and parameters in the same namespace as the files (Dose's providers,
/// Symfony's bundles), installed with ``Definitions/install(_:parameters:)``.
///
/// ```swift
/// struct LoggerProvider: DefinitionProvider {
///     func register(in definitions: Definitions) {
///         definitions.register("logger", as: SimpleLogger.self) { context in
///             SimpleLogger(debug: try context.parameter("debug_output", as: Bool.self))
///         }
///     }
/// }
/// ```
public protocol DefinitionProvider {
    func register(in definitions: Definitions)
}

/// What a provider's service factory and an extension receive: the scope it is made in, and access by name.
public struct DefinitionContext: @unchecked Sendable {  // used on the resolving thread only
    let definitions: Definitions
    let name: String
    /// The scope the service is made in.
    public let scope: Scope

    /// A parameter's value, as `T`.
    public func parameter<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        let value = try definitions.parameterValue(name, usedBy: self.name, at: "", file: "")
        guard let typed = value.plain as? T else {
            throw ConfigurationError(
                .wrongType, file: "", path: "parameters.\(name)",
                detail: "\(self.name) reads the parameter \(name) as \(T.self), but it is \(value.kind) (\(value))")
        }
        return typed
    }

    /// A service (or a parameter's value) by name, as `T`.
    public func get<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        try definitions.get(name, as: T.self, from: scope)
    }
}

/// Dose's definitions (and Symfony's services file): parameters and services, read from property lists and
/// JSON, merged in order, turned into registrations of a ``Container`` and fetched by name.
///
/// ```swift
/// let definitions = Definitions(types: ServiceTypes()
///     .type("DoseTests.Service1", Service1.self)
///     .type("DoseTests.Service2", Service2.self))
/// try definitions.load(contentsOf: URL(fileURLWithPath: "services.plist"))
/// let service2: Service2 = try definitions.get("dose.service2", as: Service2.self)
/// let same = try definitions.container.require(Service2.self, key: "dose.service2")
/// ```
/// Nothing is made until it is asked for; a service made from a definition obeys the container's rules
/// (reuse, exactly-once creation, disposal, cycles reported with the path of names).
public final class Definitions: @unchecked Sendable {  // `state` is guarded by `lock`
    /// The container the services are registered in.
    public let container: Container
    /// The types files may name.
    public let types: ServiceTypes
    /// The environment `%env(NAME)%` reads.
    private let environment: [String: String]

    private let lock = NSLock()
    /// Taken by `load` for a whole file, around `lock`: files register in the order they load, while `lock` is
    /// released during their registration (a registration a file replaces is released then, and what its
    /// factory held may resolve, which reads the namespace).
    private let loadLock = NSLock()
    private var parameters: [String: (value: ConfigurationValue, file: String)] = [:]
    private var services: [String: Record] = [:]
    private var extensions: [String: [@Sendable (Any, DefinitionContext) throws -> Any]] = [:]

    /// A named service: its definition, and how to resolve it.
    struct Record {
        let definition: ServiceDefinition
        let resolve: @Sendable (Scope) throws -> Any
    }

    /// The largest file read, and the deepest nesting: a hostile file gets an error, not a huge allocation
    /// or a deep recursion.
    static let maximumSize = 4 * 1024 * 1024
    static let maximumDepth = 64

    /// Creates empty definitions.
    /// - Parameters:
    ///   - container: The container to register the services in; a new one by default.
    ///   - types: The types the files may name.
    ///   - environment: The variables `%env(NAME)%` reads; the process's by default.
    public init(
        container: Container = Container(), types: ServiceTypes,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.container = container
        self.types = types
        self.environment = environment
    }

    // MARK: Loading

    /// The format of a definition file.
    public enum Format: Sendable {
        case propertyList, json
        /// JSON when the data starts with `{`, a property list otherwise.
        case automatic
    }

    /// Loads a definition file; its definitions win over those loaded before (an environment's file over the
    /// defaults). Nothing is made.
    /// - Parameter url: The file; `.json` is read as JSON, anything else as a property list.
    /// - Throws: ``ConfigurationError`` naming the file, the key path and the fix; nothing of the file is kept.
    public func load(contentsOf url: URL) throws {
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            if let size = attributes[.size] as? Int, size > Self.maximumSize {
                throw ConfigurationError(.unreadable, file: url.lastPathComponent, path: "", detail: "the file has \(size) bytes")
            }
            data = try Data(contentsOf: url)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(.unreadable, file: url.lastPathComponent, path: "", detail: "it cannot be read (\(error))")
        }
        try load(data, name: url.lastPathComponent, format: url.pathExtension.lowercased() == "json" ? .json : .propertyList)
    }

    /// Loads a definition file's contents; its definitions win over those loaded before.
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - name: The file's name, for messages.
    ///   - format: Property list, JSON, or decided from the contents.
    /// - Throws: ``ConfigurationError``; nothing of the file is kept.
    public func load(_ data: Data, name: String, format: Format = .automatic) throws {
        let parsed = try DefinitionFile.parse(data, name: name, format: format, environment: environment, types: types)
        loadLock.lock()
        defer { loadLock.unlock() }
        lock.lock()
        // Checked before anything changes: a file is taken whole or not at all.
        for (parameter, _) in parsed.parameters where services[parameter] != nil || parsed.services[parameter] != nil {
            lock.unlock()
            throw ConfigurationError(
                .duplicateName, file: name, path: "parameters.\(parameter)",
                detail: "\(parameter) is both a parameter and a service")
        }
        for (service, _) in parsed.services where parameters[service] != nil {
            let file = parameters[service]?.file ?? ""
            lock.unlock()
            throw ConfigurationError(
                .duplicateName, file: name, path: "services.\(service)",
                detail: "\(service) is both a parameter (from \(file)) and a service")
        }
        for (parameter, value) in parsed.parameters { parameters[parameter] = (value, name) }
        let definitions = parsed.services.sorted(by: { $0.key < $1.key }).map(\.value)
        for definition in definitions { record(definition) }
        lock.unlock()
        for definition in definitions { register(definition) }
    }

    /// Records `definition` in the namespace. Call with the lock held.
    private func record(_ definition: ServiceDefinition) {
        // The parser checked that the type is declared.
        let entry = types.entries[definition.typeName]!
        let key = definition.key
        services[definition.name] = Record(definition: definition) { scope in try entry.resolve(scope, key) }
    }

    /// Registers `definition` in the container. Call without the lock: the registration it replaces is
    /// released here, and what that held may resolve.
    private func register(_ definition: ServiceDefinition) {
        // The parser checked that the type is declared.
        let entry = types.entries[definition.typeName]!
        entry.register(container, definition.key, definition.reuse) { [unowned self] scope in
            let arguments = DefinitionArguments(
                service: definition.name, file: definition.file, arguments: definition.arguments, definitions: self,
                scope: scope)
            let instance = try entry.make(arguments)
            return try self.extended(definition.name, instance, in: scope)
        }
    }

    // MARK: Providers and code

    /// Installs a provider: its parameters and services join the namespace. `parameters` override the
    /// parameters of that name (Dose: `register(SimpleLoggerProvider(), ["debug_output": true])`).
    /// - Parameters:
    ///   - provider: The provider.
    ///   - parameters: Parameter values that override those of the files and of earlier providers.
    public func install(_ provider: any DefinitionProvider, parameters: [String: Any] = [:]) {
        for (name, value) in parameters { setParameter(name, value) }
        provider.register(in: self)
    }

    /// Sets a parameter (a provider's, or an override). A value of a type a file cannot hold is ignored.
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: A `Bool`, `Int`, `Double`, `String`, or an array or a dictionary of those.
    public func setParameter(_ name: String, _ value: Any) {
        guard let value = ConfigurationValue(value) else { return }
        lock.lock()
        parameters[name] = (value, "code")
        lock.unlock()
    }

    /// Defines a named service in code, in the same namespace as the files (a provider's service): a file's
    /// service may take it as `@name`, and it may fetch a file's service by name.
    /// - Parameters:
    ///   - name: Its name.
    ///   - type: The type it is registered and resolved as.
    ///   - reuse: `.singleton` by default.
    ///   - tags: Its tags.
    ///   - make: Makes it, with access to the parameters and services by name.
    public func register<Service>(
        _ name: String, as type: Service.Type = Service.self, reuse: Reuse = .singleton, tags: [String] = [],
        _ make: @escaping @Sendable (DefinitionContext) throws -> Service
    ) {
        container.register(Service.self, reuse: reuse, key: name, ifAlreadyRegistered: .replace) { [unowned self] (scope: Scope) in
            let context = DefinitionContext(definitions: self, name: name, scope: scope)
            // `extended` returns what `make` made, or what an extension of it returned, a `Service`.
            return try self.extended(name, try make(context), in: scope) as! Service
        }
        let definition = ServiceDefinition(
            name: name, typeName: String(describing: Service.self), arguments: [], reuse: reuse, key: name, tags: tags,
            file: "code")
        lock.lock()
        services[name] = Record(definition: definition) { scope in try scope.require(Service.self, key: name) }
        lock.unlock()
    }

    /// Wraps the named service's instance in code before it is handed out (Pimple's and Dose's `extend`):
    /// a decorator, a configuration step. Call it before the service is first made.
    /// - Parameters:
    ///   - name: The service's name.
    ///   - type: The service's type.
    ///   - wrap: Receives the instance and returns the one to hand out.
    public func extend<Service>(
        _ name: String, as type: Service.Type = Service.self,
        _ wrap: @escaping @Sendable (Service, DefinitionContext) throws -> Service
    ) {
        lock.lock()
        extensions[name, default: []].append { instance, context in
            guard let typed = instance as? Service else {
                throw ConfigurationError(
                    .wrongType, file: "", path: "services.\(name)",
                    detail: "an extension of \(name) expects \(Service.self), but the service is a \(Swift.type(of: instance))")
            }
            return try wrap(typed, context)
        }
        lock.unlock()
    }

    private func extended(_ name: String, _ instance: Any, in scope: Scope) throws -> Any {
        lock.lock()
        let wraps = extensions[name] ?? []
        lock.unlock()
        var instance = instance
        let context = DefinitionContext(definitions: self, name: name, scope: scope)
        for wrap in wraps { instance = try wrap(instance, context) }
        return instance
    }

    // MARK: Fetching by name

    /// A parameter's value or a service's instance, by name (Dose's `get`), made on first use for a service.
    /// - Parameters:
    ///   - name: The name.
    ///   - scope: The scope to resolve a service from; the container's root by default.
    /// - Returns: The value (`Bool`, `Int`, `Double`, `String`, arrays, dictionaries) or the instance.
    /// - Throws: ``ConfigurationError`` for a name nothing defines or a bad definition; a ``ResolutionError`` from
    ///   the container (a cycle, with the path of names).
    public func get(_ name: String, from scope: Scope? = nil) throws -> Any {
        lock.lock()
        let parameter = parameters[name]
        let service = services[name]
        lock.unlock()
        if let parameter { return parameter.value.plain }
        guard let service else {
            throw ConfigurationError(.unknownName, file: "", path: name, detail: "nothing is defined under the name \(name)")
        }
        return try unwrapped { try service.resolve(scope ?? container.root) }
    }

    /// A parameter's value or a service's instance by name, as `T` (`get("dose.service2", as: Service2.self)`).
    public func get<T>(_ name: String, as type: T.Type, from scope: Scope? = nil) throws -> T {
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

    /// Every name defined: parameters and services, sorted.
    public var names: [String] {
        lock.lock()
        defer { lock.unlock() }
        return (Array(parameters.keys) + Array(services.keys)).sorted()
    }

    /// The parameters' names, sorted.
    public var parameterNames: [String] {
        lock.lock()
        defer { lock.unlock() }
        return parameters.keys.sorted()
    }

    /// The services' names, sorted.
    public var serviceNames: [String] {
        lock.lock()
        defer { lock.unlock() }
        return services.keys.sorted()
    }

    /// A service's definition, without making it; nil when no service has that name.
    public func definition(of name: String) -> ServiceDefinition? {
        lock.lock()
        defer { lock.unlock() }
        return services[name]?.definition
    }

    /// The names of the services with `tag`, sorted.
    public func services(taggedWith tag: String) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return services.values.filter { $0.definition.tags.contains(tag) }.map(\.definition.name).sorted()
    }

    /// Every problem of the definitions as they stand (files and providers together), without making anything:
    /// references to nothing, reference cycles (named), services whose arguments refer to them... Empty when
    /// all is well.
    public func validate() -> [ConfigurationError] {
        lock.lock()
        let services = services
        let parameters = parameters
        lock.unlock()
        var problems: [ConfigurationError] = []
        for (name, record) in services.sorted(by: { $0.key < $1.key }) {
            for (position, argument) in record.definition.arguments.enumerated() {
                guard case .reference(let target) = argument else { continue }
                if services[target] == nil && parameters[target] == nil {
                    problems.append(ConfigurationError(
                        .unknownReference, file: record.definition.file, path: "services.\(name).arguments[\(position)]",
                        detail: "@\(target) names no parameter and no service"))
                }
            }
        }
        var reported: Set<String> = []
        for name in services.keys.sorted() {
            if let cycle = Self.cycle(from: name, in: services), reported.insert(Set(cycle).sorted().joined(separator: "\u{0}")).inserted {
                let definition = services[name]!.definition
                problems.append(ConfigurationError(
                    .referenceCycle, file: definition.file, path: "services.\(name)",
                    detail: "the services refer to each other in a loop: " + cycle.joined(separator: " → ")))
            }
        }
        return problems
    }

    /// A loop of service references through `start`, as names ending where they start, or nil.
    private static func cycle(from start: String, in services: [String: Record]) -> [String]? {
        var path = [start]
        var visited: Set<String> = []
        func visit(_ name: String) -> Bool {
            for case .reference(let target) in services[name]?.definition.arguments ?? [] {
                guard services[target] != nil else { continue }
                if target == start {
                    path.append(target)
                    return true
                }
                guard visited.insert(target).inserted else { continue }
                path.append(target)
                if visit(target) { return true }
                path.removeLast()
            }
            return false
        }
        return visit(start) ? path : nil
    }

    // MARK: For the arguments

    func isService(_ name: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return services[name] != nil
    }

    func parameterValue(_ name: String, usedBy service: String, at path: String, file: String) throws -> ConfigurationValue {
        lock.lock()
        let parameter = parameters[name]
        let isService = services[name] != nil
        lock.unlock()
        if let parameter { return parameter.value }
        if isService {
            throw ConfigurationError(
                .wrongKind, file: file, path: path, detail: "\(service) reads @\(name) as a value, but it is a service")
        }
        throw ConfigurationError(.unknownReference, file: file, path: path, detail: "@\(name) names no parameter and no service")
    }

    func resolve(_ name: String, from scope: Scope, usedBy service: String, at path: String, file: String) throws -> Any {
        lock.lock()
        let record = services[name]
        lock.unlock()
        guard let record else {
            throw ConfigurationError(.unknownReference, file: file, path: path, detail: "@\(name) names no parameter and no service")
        }
        return try record.resolve(scope)
    }
}
