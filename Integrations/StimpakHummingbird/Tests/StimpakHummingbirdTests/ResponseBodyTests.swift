import Hummingbird
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
}
