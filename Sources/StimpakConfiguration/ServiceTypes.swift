import Stimpak

/// A service type a definition file may name (`class`), declared by the program: Swift cannot make an instance
/// from a type's name.
///
/// ```swift
/// let types = ServiceTypes()
///     .type("DoseTests.Service1", Service1.self)                              // Service1: DefinedService
///     .type("App.Mailer") { arguments in Mailer(host: try arguments.string(0), port: try arguments.int(1)) }
/// ```
public protocol DefinedService: SendableMetatype {
    /// The numbers of arguments a definition of the type may give: a file whose definition gives another
    /// number is refused when it loads (``ConfigurationError/Code/wrongArgumentCount``). Any number by default,
    /// and then a definition that gives too few fails when the service is made, at the first argument missing.
    ///
    /// ```swift
    /// static let argumentCounts = 1...3       // Dose's Service1 reads args[0], and args[2] when there are three
    /// ```
    static var argumentCounts: ClosedRange<Int> { get }

    /// Makes the service from its definition's arguments, read by position and type.
    init(arguments: DefinitionArguments) throws
}

extension DefinedService {
    /// Any number of arguments: none is checked when a file loads.
    public static var argumentCounts: ClosedRange<Int> { 0...Int.max }
}

/// The types the definition files of a program may name, each with how it is built from its arguments.
public struct ServiceTypes: Sendable {
    /// A declared type, with its type erased.
    struct Entry: Sendable {
        let swiftType: Any.Type
        /// The numbers of arguments its definitions may give, checked when a file loads.
        let argumentCounts: ClosedRange<Int>
        let make: @Sendable (DefinitionArguments) throws -> Any
        /// Registers a factory of the service named `name`, of this type, in `target` (the container, or a
        /// scope) under `key`.
        let register: @Sendable (_ target: Resolving, _ name: String, _ key: AnyHashable, Reuse, @escaping @Sendable (Scope) throws -> Any) -> Void
        /// Resolves the registration of the type under `key` from `scope`.
        let resolve: @Sendable (Scope, AnyHashable) throws -> Any
    }

    var entries: [String: Entry] = [:]

    public init() {}

    /// Declares a type that builds itself from the definition's arguments, which takes the numbers of
    /// arguments its ``DefinedService/argumentCounts`` states.
    /// - Parameters:
    ///   - name: The name files use in `class`, e.g. `DoseTests.Service1`.
    ///   - type: The type.
    /// - Returns: The declarations with this one added.
    public func type<Service: DefinedService>(_ name: String, _ type: Service.Type) -> ServiceTypes {
        self.type(name, Service.self, argumentCounts: Service.argumentCounts) { arguments in
            try Service(arguments: arguments)
        }
    }

    /// Declares a type built by `make` from the definition's arguments.
    /// - Parameters:
    ///   - name: The name files use in `class`.
    ///   - type: The type the service is registered and resolved as.
    ///   - argumentCounts: The numbers of arguments a definition may give: a file whose definition gives
    ///     another number is refused when it loads. Any number by default.
    ///   - make: Makes an instance from the arguments, read by position and type.
    /// - Returns: The declarations with this one added.
    public func type<Service>(
        _ name: String, _ type: Service.Type = Service.self, argumentCounts: ClosedRange<Int> = 0...Int.max,
        make: @escaping @Sendable (DefinitionArguments) throws -> Service
    ) -> ServiceTypes {
        var copy = self
        copy.entries[name] = Entry(
            swiftType: Service.self,
            argumentCounts: argumentCounts,
            make: { arguments in try make(arguments) },
            register: { target, name, key, reuse, factory in
                target.register(Service.self, reuse: reuse, key: key, ifAlreadyRegistered: .replace) { (scope: Scope) in
                    // What `make` made, a `Service`, after the service's extensions, which may return another type.
                    let instance = try factory(scope)
                    guard let typed = instance as? Service else {
                        throw ConfigurationError.wrongInstance(of: name, returned: instance, registeredAs: Service.self)
                    }
                    return typed
                }
            },
            resolve: { scope, key in try scope.require(Service.self, key: key) })
        return copy
    }

    /// The names declared.
    public var names: [String] { entries.keys.sorted() }
}
