@_spi(Reflection) import Swift
import Vapor

extension Response.Body {
    /// Whether the body is written by a callback after the handler returned (a stream), rather than from
    /// bytes already in memory.
    ///
    /// Vapor keeps that in a stored enum it does not make public (`storage`: `none`, `buffer`, `data`,
    /// `dispatchData`, `staticString`, `string`, `stream` or `asyncStream`). Its case is read through the
    /// Swift runtime's `swift_EnumCaseName`, which `Mirror` uses too, at a fraction of `Mirror`'s cost (no
    /// allocation): the field's offset and type come from the runtime's field records, the case names are
    /// checked once against bodies of each kind, and if any check fails every body counts as written later,
    /// so that a scope is never disposed under a body that still uses it.
    var isWrittenLater: Bool {
        guard let layout = BodyStorage.layout else { return true }
        func isInMemory<Storage>(_: Storage.Type) -> Bool {
            BodyStorage.inMemoryCases.contains(caseName(of: self, at: layout.offset, as: Storage.self) ?? "")
        }
        return !_openExistential(layout.type, do: isInMemory)
    }
}

/// Where `Response.Body` keeps its stored enum, and the names of its cases.
private enum BodyStorage {
    /// The cases whose bytes are in memory when the handler returns.
    static let inMemoryCases: Set<String> = ["none", "buffer", "data", "dispatchData", "staticString", "string"]

    /// The offset and type of the body's `storage` field; nil when there is no such field or its cases are
    /// not named as expected.
    static let layout: (offset: Int, type: Any.Type)? = {
        var found: (offset: Int, type: Any.Type)?
        _ = _forEachField(of: Response.Body.self, options: []) { name, offset, type, _ in
            if String(cString: name) == "storage" { found = (offset, type) }
            return true
        }
        guard let found else { return nil }
        func matches<Storage>(_: Storage.Type) -> Bool {
            let samples: [(Response.Body, String)] = [
                (Response.Body(), "none"),
                (Response.Body(string: "a"), "string"),
                (Response.Body(buffer: ByteBuffer(string: "a")), "buffer"),
                (Response.Body(stream: { _ in }), "stream"),
                (Response.Body(asyncStream: { _ in }), "asyncStream"),
            ]
            return found.offset + MemoryLayout<Storage>.size <= MemoryLayout<Response.Body>.size
                && samples.allSatisfy { caseName(of: $0.0, at: found.offset, as: Storage.self) == $0.1 }
        }
        return _openExistential(found.type, do: matches) ? found : nil
    }()
}

/// The case name of `body`'s stored enum, of type `Storage` at `offset` (``BodyStorage/layout`` checks both).
private func caseName<Storage>(of body: Response.Body, at offset: Int, as _: Storage.Type) -> String? {
    withUnsafeBytes(of: body) { bytes in
        enumCaseName(bytes.load(fromByteOffset: offset, as: Storage.self)).map { String(cString: $0) }
    }
}

/// The Swift runtime's name of an enum value's case (what `Mirror` and `String(describing:)` read).
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
