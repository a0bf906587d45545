import Hummingbird
import StimpakServer
import Testing

@testable import StimpakHummingbird

/// How the middleware tells a body in memory from one written later.
@Suite struct ResponseBodyTests {
    @Test("bytes and an empty body are in memory; a closure, a stream and a sequence are written later")
    func writtenLater() {
        #expect(!ResponseBody().isWrittenLater)
        #expect(!ResponseBody(byteBuffer: ByteBuffer(string: "hello")).isWrittenLater)
        #expect(ResponseBody { writer in try await writer.finish(nil) }.isWrittenLater)
        #expect(ResponseBody(contentLength: 5) { writer in try await writer.finish(nil) }.isWrittenLater)
        #expect(ResponseBody(contentsOf: [ByteBuffer(string: "a")]).isWrittenLater)
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        continuation.finish()
        #expect(ResponseBody(asyncSequence: stream).isWrittenLater)
    }

    enum Payloads {
        case bytes([UInt8])
        case closure(Int?, @Sendable () -> Void)
        case none
        case other
    }

    enum OnePayload {
        case empty
        case value(String)
        case other
    }

    enum NoPayload {
        case first, second, third
    }

    struct NotAnEnum {
        var value = 1
    }

    /// The index of `value`'s case read by `tag`.
    func index<Value>(_ tag: EnumTag, of value: Value) -> UInt32 {
        withUnsafeBytes(of: value) { tag.index(ofValueAt: $0.baseAddress.unsafelyUnwrapped) }
    }

    @Test("EnumTag reads the case index of any enum layout, payload cases first; a type that is not an enum has none")
    func enumTags() throws {
        let payloads = try #require(EnumTag(Payloads.self))
        #expect(index(payloads, of: Payloads.bytes([1, 2])) == 0)
        #expect(index(payloads, of: Payloads.closure(nil) {}) == 1)
        #expect(index(payloads, of: Payloads.none) == 2)
        #expect(index(payloads, of: Payloads.other) == 3)
        let onePayload = try #require(EnumTag(OnePayload.self))
        #expect(index(onePayload, of: OnePayload.value("a")) == 0)
        #expect(index(onePayload, of: OnePayload.empty) == 1)
        #expect(index(onePayload, of: OnePayload.other) == 2)
        let noPayload = try #require(EnumTag(NoPayload.self))
        #expect([NoPayload.first, .second, .third].map { index(noPayload, of: $0) } == [0, 1, 2])
        let optional = try #require(EnumTag(String?.self))
        #expect(index(optional, of: String?.some("a")) == 0)
        #expect(index(optional, of: String?.none) == 1)
        #expect(EnumTag(NotAnEnum.self) == nil)
        #expect(EnumTag(ResponseBody.self) == nil)
        #expect(EnumTag(String.self) == nil)
        #expect(EnumTag.name(of: Payloads.other) == "other")
        #expect(noPayload.size == MemoryLayout<NoPayload>.size && payloads.size == MemoryLayout<Payloads>.size)
        #expect(onePayload.indices(of: [(OnePayload.value("a"), "value"), (.empty, "empty")]) == ["value": 0, "empty": 1])
        #expect(onePayload.indices(of: [(OnePayload.value("a"), "empty")]) == nil, "a name that is not the case's")
        #expect(noPayload.indices(of: [(NoPayload.first, "first"), (NoPayload.second, "first")]) == nil, "two cases under one name")
        #expect(noPayload.indices(of: [(NoPayload.first, "first")], at: 1) == nil, "past the value's end")
    }
}
