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
    /// Defines the provider's parameters and services: their defaults, which the values given to
    /// ``Definitions/install(_:parameters:)`` replace.
    /// - Parameter definitions: The definitions to define them in.
    /// - Throws: Any error, which `install` hands on (``Definitions/setParameter(_:_:)``'s, for one).
    func register(in definitions: Definitions) throws
}

/// What a provider's service factory and an extension receive: the scope it is made in, and access by name.
public struct DefinitionContext: @unchecked Sendable {  // used on the resolving thread only
    let namespace: DefinitionNamespace
    let name: String
    /// The scope the service is made in.
    public let scope: Scope

    /// A parameter's value, or the object set under its name, as `T`.
    public func parameter<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        let parameter = try namespace.parameterValue(name, usedBy: self.name, at: "", file: "")
        if let typed = parameter.plain as? T { return typed }
        let found: String
        switch parameter {
        case .value(let value): found = "\(value.kind) (\(value))"
        case .object(let object): found = "a \(Swift.type(of: object)) set in code"
        }
        throw ConfigurationError(
            .wrongType, file: "", path: "parameters.\(name)",
            detail: "\(self.name) reads the parameter \(name) as \(T.self), but it is \(found)")
    }

    /// A service (or a parameter's value) by name, as `T`.
    public func get<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        try namespace.get(name, as: T.self, from: scope)
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
/// (reuse, exactly-once creation, disposal, cycles reported with the path of names). The container's
/// registrations hold what they need (parameters, services, extensions): they resolve after this value is
/// released, and they hold no reference to it.
public final class Definitions: Sendable {
    /// The container the services are registered in.
    public let container: Container
    /// The types files may name.
    public let types: ServiceTypes
    /// The environment `%env(NAME)%` reads.
    private let environment: [String: String]

    /// The parameters, services and extensions, which the container's registrations hold.
    let namespace = DefinitionNamespace()
    /// Taken by `load` for a whole file: files register in the order they load, while the namespace's lock is
    /// released during their registration (a registration a file replaces is released then, and what its
    /// factory held may resolve, which reads the namespace).
    private let loadLock = NSLock()

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
        var declared: [(ServiceDefinition, ServiceTypes.Entry)] = []
        for (service, definition) in parsed.services.sorted(by: { $0.key < $1.key }) {
            guard let entry = types.entries[definition.typeName] else {
                throw ConfigurationError(
                    .unknownType, file: name, path: "services.\(service).class",
                    detail: "the type \(definition.typeName) is not declared")
            }
            declared.append((definition, entry))
        }
        loadLock.lock()
        defer { loadLock.unlock() }
        try namespace.withLock { parameters, services in
            // Checked before anything changes: a file is taken whole or not at all.
            for (parameter, _) in parsed.parameters where services[parameter] != nil || parsed.services[parameter] != nil {
                throw ConfigurationError(
                    .duplicateName, file: name, path: "parameters.\(parameter)",
                    detail: "\(parameter) is both a parameter and a service")
            }
            for (service, _) in parsed.services {
                guard let parameter = parameters[service] else { continue }
                throw ConfigurationError(
                    .duplicateName, file: name, path: "services.\(service)",
                    detail: "\(service) is both a parameter (from \(parameter.file)) and a service")
            }
            for (parameter, value) in parsed.parameters { parameters[parameter] = (.value(value), name) }
            for (definition, entry) in declared {
                let key = definition.key
                services[definition.name] = DefinitionNamespace.Record(definition: definition) { scope in
                    try entry.resolve(scope, key)
                }
            }
        }
        for (definition, entry) in declared { register(definition, entry) }
    }

    /// Registers `definition` in the container. Call without the namespace's lock: the registration it
    /// replaces is released here, and what that held may resolve.
    private func register(_ definition: ServiceDefinition, _ entry: ServiceTypes.Entry) {
        let namespace = namespace
        entry.register(container, definition.name, definition.key, definition.reuse) { scope in
            let arguments = DefinitionArguments(
                service: definition.name, file: definition.file, arguments: definition.arguments, namespace: namespace,
                scope: scope)
            return try namespace.extended(definition.name, try entry.make(arguments), in: scope)
        }
    }

    // MARK: Providers and code

    /// Installs a provider: its parameters and services join the namespace, then `parameters` are set, so
    /// they win over the provider's own defaults and over the files' values (Dose's and Silex's
    /// `register(SimpleLoggerProvider(), ["debug_output": true])`).
    ///
    /// ```swift
    /// try definitions.install(SimpleLoggerProvider(), parameters: ["debug_output": true])
    /// ```
    /// - Parameters:
    ///   - provider: The provider.
    ///   - parameters: Values set after the provider's `register`, as ``setParameter(_:_:)`` sets them.
    /// - Throws: What the provider's `register` throws; ``ConfigurationError`` `duplicateName` when one of
    ///   `parameters` names a service, and then none of them is set (the provider's definitions stay).
    public func install(_ provider: any DefinitionProvider, parameters: [String: any Sendable] = [:]) throws {
        try provider.register(in: self)
        try setParameters(parameters)
    }

    /// Sets a parameter, replacing the value of that name: a value a file can hold (`Bool`, `Int`, `Double`,
    /// `String`, and arrays and dictionaries of those) is read as a file's parameter is; any other value (an
    /// object, a closure) is stored as it is, as Dose's `app["direct1"] = Service1(...)`, and `get` returns it.
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: The value; `Sendable`, since every thread that resolves may read it.
    /// - Throws: ``ConfigurationError`` `duplicateName` when `name` is a service's: a name is a parameter or a
    ///   service, never both.
    public func setParameter(_ name: String, _ value: any Sendable) throws {
        try setParameters([name: value])
    }

    /// Sets `values` together, or none of them when one names a service.
    private func setParameters(_ values: [String: any Sendable]) throws {
        guard !values.isEmpty else { return }
        let converted = values.mapValues(DefinitionNamespace.Parameter.init)
        try namespace.withLock { parameters, services in
            for name in converted.keys.sorted() {
                guard let service = services[name] else { continue }
                throw ConfigurationError(
                    .duplicateName, file: "", path: "parameters.\(name)",
                    detail: "\(name) is a service (from \(service.definition.file)), so it cannot be set as a parameter")
            }
            for (name, value) in converted { parameters[name] = (value, "code") }
        }
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
        let namespace = namespace
        container.register(Service.self, reuse: reuse, key: name, ifAlreadyRegistered: .replace) { (scope: Scope) in
            let context = DefinitionContext(namespace: namespace, name: name, scope: scope)
            let instance = try namespace.extended(name, try make(context), in: scope)
            guard let typed = instance as? Service else {
                throw ConfigurationError.wrongInstance(of: name, returned: instance, registeredAs: Service.self)
            }
            return typed
        }
        let definition = ServiceDefinition(
            name: name, typeName: String(describing: Service.self), arguments: [], reuse: reuse, key: name, tags: tags,
            file: "code")
        namespace.withLock { _, services in
            services[name] = DefinitionNamespace.Record(definition: definition) { scope in
                try scope.require(Service.self, key: name)
            }
        }
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
        namespace.addExtension(
            { instance, context in
                guard let typed = instance as? Service else {
                    throw ConfigurationError(
                        .wrongType, file: "", path: "services.\(name)",
                        detail: "an extension of \(name) expects \(Service.self), but the service is a \(Swift.type(of: instance))")
                }
                return try wrap(typed, context)
            }, to: name)
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
        try namespace.get(name, from: scope ?? container.root)
    }

    /// A parameter's value or a service's instance by name, as `T` (`get("dose.service2", as: Service2.self)`).
    public func get<T>(_ name: String, as type: T.Type, from scope: Scope? = nil) throws -> T {
        try namespace.get(name, as: T.self, from: scope ?? container.root)
    }

    /// Every name defined: parameters and services, sorted.
    public var names: [String] {
        namespace.withLock { parameters, services in (Array(parameters.keys) + Array(services.keys)).sorted() }
    }

    /// The parameters' names, sorted.
    public var parameterNames: [String] {
        namespace.withLock { parameters, _ in parameters.keys.sorted() }
    }

    /// The services' names, sorted.
    public var serviceNames: [String] {
        namespace.withLock { _, services in services.keys.sorted() }
    }

    /// A service's definition, without making it; nil when no service has that name.
    public func definition(of name: String) -> ServiceDefinition? {
        namespace.withLock { _, services in services[name]?.definition }
    }

    /// The names of the services with `tag`, sorted.
    public func services(taggedWith tag: String) -> [String] {
        namespace.withLock { _, services in
            services.values.filter { $0.definition.tags.contains(tag) }.map(\.definition.name).sorted()
        }
    }
}
