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
        return !layout.inMemory.contains(layout.tag.index(in: self))
    }
}

/// How to read `ResponseBody`'s one stored property, and which of its cases hold their bytes in memory.
private enum BodyStorage {
    /// The enum's reader, and the indices of its cases `byteBuffer` and `empty`; nil when the body is not laid
    /// out as that one enum, or its cases are not named and numbered as expected.
    static let layout: (tag: EnumTag, inMemory: Set<UInt32>)? = {
        let mirror = Mirror(reflecting: ResponseBody())
        guard mirror.children.count == 1, let storage = mirror.children.first, storage.label == "_backing",
            let tag = EnumTag(Swift.type(of: storage.value)), tag.size == MemoryLayout<ResponseBody>.size,
            let cases = tag.indices(of: [
                (ResponseBody(), "empty"),
                (ResponseBody(byteBuffer: ByteBuffer(string: "a")), "byteBuffer"),
                (ResponseBody { _ in }, "closure"),
                (ResponseBody(contentLength: 1) { _ in }, "closure"),
            ]),
            let empty = cases["empty"], let byteBuffer = cases["byteBuffer"]
        else { return nil }
        return (tag, [empty, byteBuffer])
    }()
}
