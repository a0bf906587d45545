/// What identifies a registration: the service type, the type of its runtime arguments and an optional key.
///
/// Errors use it to name what was asked for, what is registered instead, and the resolution path.
public struct ServiceKey: Hashable, @unchecked Sendable, CustomStringConvertible {
    // Unchecked only because `AnyHashable` is not `Sendable`: keys are documented to be immutable values
    // (strings, numbers, enums), and Stimpak only hashes, compares and describes them.

    /// The type that is resolved.
    public let service: Any.Type
    /// The runtime arguments' type: `()` for none, the type itself for one, a tuple for several.
    public let arguments: Any.Type
    /// The registration's key, or nil for an unkeyed registration.
    public let key: AnyHashable?
    /// `key`'s hash (0 without one), computed once: a key is hashed again each time a dictionary that holds
    /// it grows, and hashing an `AnyHashable` goes through its box.
    private let keyHash: Int

    /// Creates a key.
    /// - Parameters:
    ///   - service: The resolved type.
    ///   - arguments: The runtime arguments' type (`Void.self` for none).
    ///   - key: The registration key, or nil.
    public init(service: Any.Type, arguments: Any.Type = Void.self, key: AnyHashable? = nil) {
        self.service = service
        self.arguments = arguments
        self.key = key
        self.keyHash = key?.hashValue ?? 0
    }

    public static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool {
        ObjectIdentifier(lhs.service) == ObjectIdentifier(rhs.service)
            && ObjectIdentifier(lhs.arguments) == ObjectIdentifier(rhs.arguments)
            && lhs.keyHash == rhs.keyHash && lhs.key == rhs.key
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(service))
        hasher.combine(ObjectIdentifier(arguments))
        hasher.combine(keyHash)
    }

    /// Whether the registration takes runtime arguments.
    var hasArguments: Bool { ObjectIdentifier(arguments) != ObjectIdentifier(Void.self) }

    /// `Foo`, `Person(String, String)`, `Foo[key: "A"]`: how the key reads in a message.
    public var description: String {
        var text = String(describing: service)
        if hasArguments {
            let args = String(describing: arguments)
            text += args.hasPrefix("(") ? args : "(\(args))"
        }
        if let key { text += "[key: \(String(reflecting: key.base))]" }
        return text
    }
}
