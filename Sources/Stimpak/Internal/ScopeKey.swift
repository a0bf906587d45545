/// The key a child scope was opened with, as a scope keeps it.
///
/// `Int` and `String` keys (request ids, names) and the keys of anonymous scopes are held as themselves,
/// so that opening a scope with one builds no `AnyHashable` (whose initializer asks the runtime, on every
/// call, whether the type has a custom `AnyHashable` representation: most of what opening a scope cost);
/// any other key is held as `AnyHashable`. Keys compare and hash exactly as their `AnyHashable`s do:
/// `Int8(3)` opens the same child as `3`.
// Unchecked only because `AnyHashable` is not `Sendable`: scope keys are documented to be immutable values.
enum ScopeKey: Hashable, @unchecked Sendable {
    case integer(Int)
    case string(String)
    case anonymous(Int)
    /// Boxed, so that the enum stays two words and a tag (copying or destroying an inline `AnyHashable`
    /// goes through its value witnesses, on every scope).
    case other(OtherKey)

    final class OtherKey: @unchecked Sendable {  // immutable; see the note on `AnyHashable` above
        let key: AnyHashable

        init(_ key: AnyHashable) {
            self.key = key
        }
    }

    init<Key: Hashable>(_ key: Key) {
        // `Key` is the type compared in each branch: the casts only rename it.
        if Key.self == Int.self {
            self = .integer(unsafeBitCast(key, to: Int.self))
        } else if Key.self == String.self {
            self = .string(unsafeBitCast(key, to: String.self))
        } else if Key.self == AnyHashable.self {
            self.init(erased: unsafeBitCast(key, to: AnyHashable.self))
        } else {
            self.init(erased: AnyHashable(key))
        }
    }

    /// A key given as `AnyHashable`: its base unwrapped when it is an `Int`, a `String` or an anonymous key
    /// (so `.other` holds none of these).
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
    /// string's). An anonymous key equals only itself.
    func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let integer): hasher.combine(integer)
        case .string(let string): hasher.combine(string)
        case .anonymous(let number): hasher.combine(AnonymousScopeKey(number: number))
        case .other(let other): hasher.combine(other.key)
        }
    }

    /// The same hash in one call (the dictionary's customization point, and what `hashValue` calls): an
    /// `Int`'s one-shot hash equals what `hash(into:)` feeds a `Hasher` for it, without building one.
    func _rawHashValue(seed: Int) -> Int {
        switch self {
        case .integer(let integer): return integer._rawHashValue(seed: seed)
        case .string(let string): return string._rawHashValue(seed: seed)
        case .anonymous(let number): return AnonymousScopeKey(number: number)._rawHashValue(seed: seed)
        case .other(let other): return other.key._rawHashValue(seed: seed)
        }
    }
}
