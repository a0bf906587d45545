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
    public var key: AnyHashable? { storedKey?.key }
    /// The key and its hash, computed once, in a box: a service key is copied and hashed often (each time a
    /// dictionary that holds it grows), and copying or hashing an `AnyHashable` goes through its box's
    /// value witnesses; a reference is one retain. A registration's `String` or `Int` key is boxed in a
    /// ``KeyBox`` of its own type, which the lookup table uses as it is.
    private let storedKey: AnyKeyBox?

    /// The key's box, for code that reads the key without copying it (``LookupTable``), or nil.
    var keyBox: AnyKeyBox? { storedKey }

    /// Creates a key.
    /// - Parameters:
    ///   - service: The resolved type.
    ///   - arguments: The runtime arguments' type (`Void.self` for none).
    ///   - key: The registration key, or nil.
    public init(service: Any.Type, arguments: Any.Type = Void.self, key: AnyHashable? = nil) {
        self.service = service
        self.arguments = arguments
        // Consumed, so that the key moves into its box: each copy of an `AnyHashable` goes through its
        // box's value witnesses (about 100 instructions).
        switch consume key {
        case .some(let key): storedKey = AnyKeyBox(key)
        case .none: storedKey = nil
        }
    }

    /// A key with its key box as it is: a registration's (see ``Registry/registeredBox(for:)``) or an
    /// interned one.
    init(service: Any.Type, arguments: Any.Type, box: AnyKeyBox?) {
        self.service = service
        self.arguments = arguments
        storedKey = box
    }

    public static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool {
        ObjectIdentifier(lhs.service) == ObjectIdentifier(rhs.service)
            && ObjectIdentifier(lhs.arguments) == ObjectIdentifier(rhs.arguments)
            && Self.sameKey(lhs.storedKey, rhs.storedKey)
    }

    /// Two boxes interned by one ``KeyInterner`` hold equal keys only when they are one box: what the
    /// container's lock guards compares them without running a key's `==`.
    static func sameKey(_ left: AnyKeyBox?, _ right: AnyKeyBox?) -> Bool {
        guard let left, let right else { return left == nil && right == nil }
        if left === right { return true }
        guard left.hash == right.hash else { return false }
        if left.domain != 0, left.domain == right.domain { return false }
        return left.key == right.key
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(service))
        hasher.combine(ObjectIdentifier(arguments))
        hasher.combine(storedKey?.hash ?? 0)
    }

    /// The hash the standard library's dictionaries and sets use: the two type identities and the key's
    /// stored hash mixed with multiplies (a registry hashes every key again each time its dictionary
    /// grows, and a `Hasher` costs several times this). Type identities are addresses, not input an
    /// attacker chooses, and the key's hash is the key's own seeded `hashValue`.
    public func _rawHashValue(seed: Int) -> Int {
        var bits = UInt(bitPattern: ObjectIdentifier(service)) &* 0x9E37_79B9_7F4A_7C15
        bits ^= UInt(bitPattern: ObjectIdentifier(arguments)) &* 0xC2B2_AE3D_27D4_EB4F
        bits ^= UInt(bitPattern: storedKey?.hash ?? 0)
        bits ^= bits >> 29
        bits &*= 0xBF58_476D_1CE4_E5B9
        bits ^= bits >> 32
        return Int(bitPattern: bits) ^ seed
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

/// The key a child scope was opened with, as a scope keeps it.
///
/// `Int` and `String` keys (request ids, names) and the keys of anonymous scopes are held as themselves,
/// so that opening a scope with one builds no `AnyHashable` (whose initializer asks the runtime, on every
/// call, whether the type has a custom `AnyHashable` representation: most of what opening a scope would cost);
/// any other key is held as `AnyHashable`. Keys compare and hash exactly as their `AnyHashable`s do:
/// `Int8(3)` opens the same child as `3`.
// Unchecked only because `AnyHashable` is not `Sendable`: scope keys are documented to be immutable values.
@usableFromInline
enum ScopeKey: Hashable, @unchecked Sendable {
    case integer(Int)
    case string(String)
    case anonymous(Int)
    /// Boxed, so that the enum stays two words and a tag (copying or destroying an inline `AnyHashable`
    /// goes through its value witnesses, on every scope).
    case other(OtherKey)

    @usableFromInline
    final class OtherKey: @unchecked Sendable {  // immutable; see the note on `AnyHashable` above
        let key: AnyHashable

        init(_ key: AnyHashable) {
            self.key = key
        }
    }

    /// In line, so that a caller's concrete `Key` folds the branches into one (`.integer` for an `Int`).
    @inlinable
    init<Key: Hashable>(_ key: Key) {
        // `Key` is the type compared in each branch.
        if Key.self == Int.self {
            self = .integer(renamed(key, as: Int.self))
        } else if Key.self == String.self {
            self = .string(renamed(key, as: String.self))
        } else if Key.self == AnyHashable.self {
            self.init(erased: renamed(key, as: AnyHashable.self))
        } else {
            self.init(erased: AnyHashable(key))
        }
    }

    /// A key given as `AnyHashable`: its base unwrapped when it is an `Int`, a `String` or an anonymous key
    /// (so `.other` holds none of these).
    @usableFromInline
    init(erased key: AnyHashable) {
        let base = key.base
        switch CommonKey.of(base) {
        case .integer(let integer)?: self = .integer(integer)
        case .string(let string)?: self = .string(string)
        case nil:
            if let anonymous = base as? AnonymousScopeKey {
                self = .anonymous(anonymous.number)
            } else {
                self = .other(OtherKey(key))
            }
        }
    }

    /// The key as the user sees it (``Scope/key``).
    var erased: AnyHashable {
        switch self {
        case .integer(let integer): return AnyHashable(integer)
        case .string(let string): return AnyHashable(string)
        case .anonymous(let number): return AnyHashable(AnonymousScopeKey(number: number))
        case .other(let other): return other.key
        }
    }

    /// Whether comparing it with a key of the same kind runs user code: an `Int`, `String` or anonymous key
    /// compares with the standard library's or Stimpak's `==`, and with an `.other` key of another type through
    /// `AnyHashable`, which compares values of one type only.
    var comparesWithUserCode: Bool {
        if case .other = self { return true }
        return false
    }

    /// The type of the key's base, for `.scopedTo(KeyType.self)`.
    var baseType: ObjectIdentifier {
        switch self {
        case .integer: return ObjectIdentifier(Int.self)
        case .string: return ObjectIdentifier(String.self)
        case .anonymous: return ObjectIdentifier(AnonymousScopeKey.self)
        case .other(let other): return ObjectIdentifier(type(of: other.key.base))
        }
    }

    @usableFromInline
    static func == (left: ScopeKey, right: ScopeKey) -> Bool {
        switch (left, right) {
        case (.integer(let left), .integer(let right)): return left == right
        case (.string(let left), .string(let right)): return left == right
        case (.anonymous(let left), .anonymous(let right)): return left == right
        case (.other(let left), .other(let right)): return left === right || left.key == right.key
        // Across representations only `AnyHashable` knows (an `Int8` held as `.other` equals an `Int`).
        case (.other, _), (_, .other): return left.erased == right.erased
        default: return false
        }
    }

    /// What the key's `AnyHashable` hashes, so that keys equal across representations hash equally: an
    /// `Int`'s and a `String`'s own hash is what their `AnyHashable` hashes (a 64-bit integer's bits, the
    /// string's). An anonymous key equals only itself: it hashes its number, as an `Int` does (the one-shot hash,
    /// where its own synthesized `Hashable` would build a `Hasher`).
    @usableFromInline
    func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let integer): hasher.combine(integer)
        case .string(let string): hasher.combine(string)
        case .anonymous(let number): hasher.combine(number)
        case .other(let other): hasher.combine(other.key)
        }
    }

    /// The same hash in one call (the dictionary's customization point, and what `hashValue` calls): an
    /// `Int`'s one-shot hash equals what `hash(into:)` feeds a `Hasher` for it, without building one. An
    /// anonymous key's number, which Stimpak assigns in sequence and no lookup names, is mixed with one multiply
    /// by an odd constant instead (the low bits that pick a bucket then cycle through every bucket): a `Hasher`
    /// costs about 95 instructions, and every request scope is anonymous.
    @usableFromInline
    func _rawHashValue(seed: Int) -> Int {
        switch self {
        case .integer(let integer): return integer._rawHashValue(seed: seed)
        case .string(let string): return string._rawHashValue(seed: seed)
        case .anonymous(let number): return Int(bitPattern: UInt(bitPattern: number) &* 0x9E37_79B9_7F4A_7C15)
        case .other(let other): return other.key._rawHashValue(seed: seed)
        }
    }
}
