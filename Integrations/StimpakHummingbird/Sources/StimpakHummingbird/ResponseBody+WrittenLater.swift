import Hummingbird
import StimpakServer

extension ResponseBody {
    /// Whether the body is written by a closure after the handler returned (a stream, a file, a writer),
    /// rather than from bytes already in memory.
    ///
    /// Hummingbird keeps that in a stored enum it does not make public (`_backing`: `byteBuffer`, `empty` or
    /// `closure`). Its case is read through the enum's value witness (``StimpakServer/EnumTag``), a call with
    /// no allocation: the cases' indices are checked once against bodies of each kind, by name, and if any
    /// check fails every body counts as written later, so that a scope is never disposed under a body that
    /// still uses it.
    var isWrittenLater: Bool {
        guard let layout = BodyStorage.layout else { return true }
        // A struct of one stored property is laid out as that property (`BodyStorage.layout` checks the sizes).
        let index = withUnsafeBytes(of: self) { layout.tag.index(ofValueAt: $0.baseAddress.unsafelyUnwrapped) }
        return !layout.inMemory.contains(index)
    }
}

/// How to read `ResponseBody`'s one stored property, and which of its cases hold their bytes in memory.
private enum BodyStorage {
    /// The enum's reader, and the indices of its cases `byteBuffer` and `empty`; nil when the body is not laid
    /// out as that one enum, or its cases are not named and numbered as expected.
    static let layout: (tag: EnumTag, inMemory: Set<UInt32>)? = {
        let mirror = Mirror(reflecting: ResponseBody())
        guard mirror.children.count == 1, let storage = mirror.children.first, storage.label == "_backing" else {
            return nil
        }
        let type = Swift.type(of: storage.value)
        guard MemoryLayout<ResponseBody>.size == sizeOfValue(ofType: type), let tag = EnumTag(type) else { return nil }
        func index(of body: ResponseBody) -> UInt32 {
            withUnsafeBytes(of: body) { tag.index(ofValueAt: $0.baseAddress.unsafelyUnwrapped) }
        }
        func name(of body: ResponseBody) -> String? {
            Mirror(reflecting: body).children.first.flatMap { EnumTag.name(of: $0.value) }
        }
        let samples: [(body: ResponseBody, name: String)] = [
            (ResponseBody(), "empty"),
            (ResponseBody(byteBuffer: ByteBuffer(string: "a")), "byteBuffer"),
            (ResponseBody { _ in }, "closure"),
            (ResponseBody(contentLength: 1) { _ in }, "closure"),
        ]
        guard samples.allSatisfy({ name(of: $0.body) == $0.name }) else { return nil }
        let inMemory = Set(samples.filter { $0.name != "closure" }.map { index(of: $0.body) })
        let writtenLater = Set(samples.filter { $0.name == "closure" }.map { index(of: $0.body) })
        guard inMemory.count == 2, writtenLater.count == 1, inMemory.isDisjoint(with: writtenLater) else { return nil }
        return (tag, inMemory)
    }()

    /// The size of a value of `type`.
    static func sizeOfValue(ofType type: Any.Type) -> Int {
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        return _openExistential(type, do: size)
    }
}
