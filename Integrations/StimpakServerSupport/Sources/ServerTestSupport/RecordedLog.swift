public import Logging
import Synchronization
public import Testing

/// A log handler that keeps every message, for the tests that check what is logged.
public final class RecordedLog: Sendable {
    /// A message logged.
    public struct Entry: Sendable {
        /// Its level.
        public let level: Logger.Level
        /// The message.
        public let message: String
        /// The logger's metadata merged with the message's.
        public let metadata: Logger.Metadata
    }

    private let stored = Mutex<[Entry]>([])

    /// An empty log.
    public init() {}

    /// The messages logged so far, oldest first.
    public var entries: [Entry] { stored.withLock { $0 } }

    /// A logger, at trace level, that records into this log.
    /// - Parameter label: The logger's label.
    /// - Returns: The logger.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ entry: Entry) { stored.withLock { $0.append(entry) } }

    struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            for (key, value) in event.metadata ?? [:] { merged[key] = value }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: merged))
        }
    }
}

extension RecordedLog {
    /// Checks that exactly one message was logged at error level, with the request's id in its metadata.
    /// - Parameters:
    ///   - requestIDKey: The metadata key of the request id (the framework's: `hb.request.id`, `request-id`).
    ///   - sourceLocation: Where a failed expectation is reported.
    /// - Returns: The message, for the checks of its text.
    @discardableResult
    public func expectOneError(requestIDKey: String, sourceLocation: SourceLocation = #_sourceLocation) -> Entry? {
        let errors = entries.filter { $0.level == .error }
        #expect(errors.count == 1, "\(errors.map(\.message))", sourceLocation: sourceLocation)
        #expect(errors.first?.metadata[requestIDKey] != nil, sourceLocation: sourceLocation)
        return errors.first
    }
}

/// Waits until `condition` holds, checking every millisecond for at most `seconds`; returns whether it held.
/// - Parameters:
///   - seconds: How long to wait at most.
///   - condition: What to wait for.
/// - Returns: Whether `condition` held.
public func eventually(within seconds: Int = 10, _ condition: () -> Bool) async throws -> Bool {
    for _ in 0..<(seconds * 1000) {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
