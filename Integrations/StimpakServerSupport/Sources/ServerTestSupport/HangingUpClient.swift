import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends `request` to 127.0.0.1:`port` over a plain socket, reads up to `readBytes` bytes of the answer (by
/// default until the server closes the connection) and closes the connection, on a thread of its own (the
/// socket calls block, and the server's handlers need the concurrency pool's threads).
/// - Parameters:
///   - port: The server's port.
///   - request: The request's bytes, as text.
///   - readBytes: How many bytes of the answer to read at most.
/// - Returns: What was read.
/// - Throws: ``SocketError``.
public func exchange(port: Int, _ request: String, readBytes: Int = .max) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try sendAndHangUp(port: port, request, readBytes: readBytes) })
        }
    }
}

/// A client that sends `request` to 127.0.0.1:`port` over a plain socket, reads up to `readBytes` bytes of
/// the answer (none for 0) and closes the connection: a client that goes away mid-response.
/// - Parameters:
///   - port: The server's port.
///   - request: The request's bytes, as text.
///   - readBytes: How many bytes of the answer to read at most.
/// - Returns: What was read.
/// - Throws: ``SocketError``.
public func sendAndHangUp(port: Int, _ request: String, readBytes: Int) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SocketError(step: "socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw SocketError(step: "connect") }
    let sent = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
    guard sent == request.utf8.count else { throw SocketError(step: "send") }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1024)
    while received.count < readBytes {
        let count = recv(fd, &buffer, min(buffer.count, readBytes - received.count), 0)
        guard count > 0 else { break }
        received += buffer[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
}

/// A socket call that failed.
public struct SocketError: Error {
    /// The call: `socket`, `connect` or `send`.
    public let step: String
}
