import Hummingbird

extension ResponseBody {
    /// Whether the body is written by a closure after the handler returned (a stream, a file, a writer),
    /// rather than from bytes already in memory.
    ///
    /// Hummingbird keeps that in a stored enum it does not make public (`_backing`: `byteBuffer`, `empty` or
    /// `closure`). Its case is read through the Swift runtime's `swift_EnumCaseName`, which `Mirror` uses too,
    /// at a fraction of `Mirror`'s cost (no allocation): the case names are checked once against bodies of each
    /// kind, and if any check fails every body counts as written later, so that a scope is never disposed
    /// under a body that still uses it.
    var isWrittenLater: Bool {
        guard let storage = BodyStorage.type else { return true }
        func isInMemory<Storage>(_: Storage.Type) -> Bool {
            BodyStorage.isInMemory(caseName(of: self, as: Storage.self))
        }
        return !_openExistential(storage, do: isInMemory)
    }
}

/// The type of `ResponseBody`'s one stored property, and how to read its case.
private enum BodyStorage {
    /// The stored enum's type; nil when the body is not laid out as that one enum, or its cases are not
    /// named as expected.
    static let type: Any.Type? = {
        let mirror = Mirror(reflecting: ResponseBody())
        guard mirror.children.count == 1, let storage = mirror.children.first, storage.label == "_backing" else {
            return nil
        }
        let type = Swift.type(of: storage.value)
        func matches<Storage>(_: Storage.Type) -> Bool {
            MemoryLayout<Storage>.size == MemoryLayout<ResponseBody>.size
                && caseName(of: ResponseBody(), as: Storage.self) == "empty"
                && caseName(of: ResponseBody(byteBuffer: ByteBuffer()), as: Storage.self) == "byteBuffer"
                && caseName(of: ResponseBody { _ in }, as: Storage.self) == "closure"
        }
        return _openExistential(type, do: matches) ? type : nil
    }()

    static func isInMemory(_ caseName: String?) -> Bool {
        caseName == "byteBuffer" || caseName == "empty"
    }
}

/// The case name of `body`'s stored enum, whose type is `Storage`: a struct of one stored property is laid
/// out as that property (`BodyStorage.type` checks the sizes).
private func caseName<Storage>(of body: ResponseBody, as _: Storage.Type) -> String? {
    withUnsafeBytes(of: body) { bytes in
        enumCaseName(bytes.load(as: Storage.self)).map { String(cString: $0) }
    }
}

/// The Swift runtime's name of an enum value's case (what `Mirror` and `String(describing:)` read).
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
