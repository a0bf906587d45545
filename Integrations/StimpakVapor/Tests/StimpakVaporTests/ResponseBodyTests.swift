import Testing
import Vapor

@testable import StimpakVapor

/// How the middleware tells a body in memory from one written later.
@Suite struct ResponseBodyTests {
    @Test("bytes, strings, data and an empty body are in memory; a stream and an async stream are written later")
    func writtenLater() {
        #expect(!Response.Body().isWrittenLater)
        #expect(!Response.Body(string: "hello").isWrittenLater)
        #expect(!Response.Body(buffer: ByteBuffer(string: "hello")).isWrittenLater)
        #expect(!Response.Body(data: Data("hello".utf8)).isWrittenLater)
        #expect(!Response.Body(staticString: "hello").isWrittenLater)
        #expect(!Response.Body(dispatchData: DispatchData.empty).isWrittenLater)
        #expect(!Response.Body(stringLiteral: "hello").isWrittenLater)
        #expect(Response.Body(stream: { writer in writer.write(.end, promise: nil) }).isWrittenLater)
        #expect(Response.Body(stream: { _ in }, count: 5).isWrittenLater)
        #expect(Response.Body(asyncStream: { writer in try await writer.write(.end) }).isWrittenLater)
        #expect(Response.Body(managedAsyncStream: { _ in }).isWrittenLater)
    }
}
