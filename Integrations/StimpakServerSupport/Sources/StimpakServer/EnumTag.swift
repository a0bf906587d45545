/// Reads which case an enum value holds, for an enum type known only at run time: what the integrations use to
/// tell a response body in memory from one written later, when the framework keeps that in a stored enum it
/// does not make public.
///
/// The case's index comes from the enum type's value witness `getEnumTag`, the function the compiler's own
/// `switch` uses on a value whose layout it does not know: a call, with no allocation and no lookup. (The
/// runtime's `swift_EnumCaseName`, which `Mirror` uses, also finds the case's name, and that demangles the
/// type of its payload on every call: about a microsecond.) The indices are the cases' order of declaration,
/// payload cases first; a caller checks once, with values of each case it knows, that they are what it
/// expects (``name(of:)``), and stays on its safe side when they are not.
public struct EnumTag: @unchecked Sendable {  // a type's metadata and its witness: immutable, process-wide
    /// The value witness: the value's address and the type's metadata in, the case's index out.
    private typealias GetEnumTag = @convention(c) (UnsafeRawPointer, UnsafeRawPointer) -> UInt32

    private let type: Any.Type
    private let metadata: UnsafeRawPointer
    private let getEnumTag: GetEnumTag
    /// The size of a value of the enum type, in bytes.
    public let size: Int

    /// The reader of `type`'s cases; nil when `type` is not an enum (or `Optional`), or its value witnesses
    /// do not include the enum witnesses.
    /// - Parameter type: The enum type.
    public init?(_ type: Any.Type) {
        // The metadata's first word is its kind; the word before it is its value witness table.
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        let kind = metadata.load(as: UInt.self)
        guard kind == Self.enumKind || kind == Self.optionalKind else { return nil }
        let witnesses = metadata.load(fromByteOffset: -MemoryLayout<UnsafeRawPointer>.size, as: UnsafeRawPointer.self)
        let flags = witnesses.load(fromByteOffset: Self.flagsOffset, as: UInt32.self)
        guard flags & Self.hasEnumWitnesses != 0 else { return nil }
        self.type = type
        self.metadata = metadata
        size = witnesses.load(fromByteOffset: Self.sizeOffset, as: Int.self)
        getEnumTag = unsafeBitCast(
            witnesses.load(fromByteOffset: Self.getEnumTagOffset, as: UnsafeRawPointer.self), to: GetEnumTag.self)
    }

    /// The index of the case held by the enum value at `value`, of the reader's type.
    /// - Parameter value: The value's address.
    /// - Returns: The case's index.
    @inline(__always)
    public func index(ofValueAt value: UnsafeRawPointer) -> UInt32 {
        getEnumTag(value, metadata)
    }

    /// The index of the case held by the enum value `offset` bytes into `container` (a struct that stores it).
    /// - Parameters:
    ///   - container: The value that stores the enum.
    ///   - offset: Where the enum lies in it.
    /// - Returns: The case's index.
    @inline(__always)
    public func index<Container>(in container: Container, at offset: Int = 0) -> UInt32 {
        withUnsafeBytes(of: container) { index(ofValueAt: $0.baseAddress.unsafelyUnwrapped + offset) }
    }

    /// Each case's index, by name, read from `samples` (values of `Container` that store the enum `offset` bytes
    /// in, each with the name of the case it holds), with the runtime's names checked (slow: once); nil when a
    /// sample's case has another name, two samples of a name have different indices, or two names the same one.
    /// - Parameters:
    ///   - samples: Values of each case, with its name.
    ///   - offset: Where the enum lies in `Container`.
    /// - Returns: The indices by name.
    public func indices<Container>(of samples: [(value: Container, name: String)], at offset: Int = 0) -> [String: UInt32]? {
        guard offset + size <= MemoryLayout<Container>.size else { return nil }
        func names<Enum>(_: Enum.Type) -> [String?] {
            samples.map { sample in
                withUnsafeBytes(of: sample.value) { Self.name(of: $0.load(fromByteOffset: offset, as: Enum.self)) }
            }
        }
        guard _openExistential(type, do: names) == samples.map(\.name) else { return nil }
        var indices: [String: UInt32] = [:]
        for sample in samples {
            let index = index(in: sample.value, at: offset)
            guard indices[sample.name, default: index] == index else { return nil }
            indices[sample.name] = index
        }
        return Set(indices.values).count == indices.count ? indices : nil
    }

    /// The name of the case that `value` holds, from the Swift runtime (slow: for checks made once).
    /// - Parameter value: A value of any enum type.
    /// - Returns: The case's name, nil when the runtime has none.
    public static func name<Value>(of value: Value) -> String? {
        enumCaseName(value).map { String(cString: $0) }
    }

    // The ABI's layout (swift/ABI/MetadataValues.h, ValueWitness.def), stable on every platform Swift runs on:
    // eight functions, `size`, `stride`, `flags` (32 bits) and the extra inhabitants' count (32 bits), then an
    // enum's three witnesses, `getEnumTag` first.
    private static let enumKind: UInt = 0x201
    private static let optionalKind: UInt = 0x202
    private static let hasEnumWitnesses: UInt32 = 0x0020_0000
    private static let sizeOffset = 8 * MemoryLayout<UnsafeRawPointer>.size
    private static let flagsOffset = 10 * MemoryLayout<UnsafeRawPointer>.size
    private static let getEnumTagOffset = 11 * MemoryLayout<UnsafeRawPointer>.size
}

/// The Swift runtime's name of an enum value's case (what `Mirror` and `String(describing:)` read).
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
