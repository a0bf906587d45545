@_spi(Reflection) import Swift
internal import StimpakServer
import Vapor

extension Response.Body {
    /// Whether the body is written by a callback after the handler returned (a stream), rather than from
    /// bytes already in memory.
    ///
    /// Vapor keeps that in a stored enum it does not make public (`storage`: `none`, `buffer`, `data`,
    /// `dispatchData`, `staticString`, `string`, `stream` or `asyncStream`). Its case is read through the
    /// enum's value witness (``StimpakServer/EnumTag``), a call with no allocation: the field's offset and
    /// type come from the runtime's field records, the cases' indices are checked once against bodies of each
    /// kind, by name, and if any check fails every body counts as written later, so that a scope is never
    /// disposed under a body that still uses it.
    var isWrittenLater: Bool {
        guard let layout = BodyStorage.layout else { return true }
        return !layout.inMemory.contains(layout.tag.index(in: self, at: layout.offset))
    }
}

/// Where `Response.Body` keeps its stored enum, how to read it, and which of its cases hold their bytes in memory.
private enum BodyStorage {
    /// The cases whose bytes are in memory when the handler returns.
    static let inMemoryCases: Set<String> = ["none", "buffer", "data", "dispatchData", "staticString", "string"]

    /// The offset of the body's `storage` field, its reader, and the indices of the cases in memory; nil when
    /// there is no such field or its cases are not named and numbered as expected.
    static let layout: (offset: Int, tag: EnumTag, inMemory: Set<UInt32>)? = {
        var found: (offset: Int, type: Any.Type)?
        _ = _forEachField(of: Response.Body.self, options: []) { name, offset, type, _ in
            if String(cString: name) == "storage" { found = (offset, type) }
            return true
        }
        guard let found, let tag = EnumTag(found.type),
            let cases = tag.indices(
                of: [
                    (Response.Body(), "none"),
                    (Response.Body(string: "a"), "string"),
                    (Response.Body(buffer: ByteBuffer(string: "a")), "buffer"),
                    (Response.Body(data: Data([1])), "data"),
                    (Response.Body(dispatchData: DispatchData.empty), "dispatchData"),
                    (Response.Body(staticString: "a"), "staticString"),
                    (Response.Body(stream: { _ in }), "stream"),
                    (Response.Body(asyncStream: { _ in }), "asyncStream"),
                ], at: found.offset)
        else { return nil }
        let inMemory = Set(inMemoryCases.compactMap { cases[$0] })
        guard inMemory.count == inMemoryCases.count else { return nil }
        return (found.offset, tag, inMemory)
    }()
}
