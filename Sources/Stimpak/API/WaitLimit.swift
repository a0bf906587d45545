/// How long a thread, or a task, waits for another's creation of the same reused instance before it gives up
/// with ``ResolutionError/Code/waitTimedOut``.
///
/// Stimpak sees a deadlock between its own waits (and reports it as a cycle), but not one that goes through
/// a wait of the user's: a factory that blocks on a `DispatchQueue.sync` or a semaphore while the work it
/// waits for resolves the same instance on another thread, or an async factory that awaits a `Task.detached`
/// that resolves it. The limit turns that hang into an error.
///
/// ```swift
/// let container = Container(waitLimit: .seconds(5))
/// ```
public struct WaitLimit: Sendable, Hashable, CustomStringConvertible {
    /// The limit in nanoseconds; nil for no limit.
    let nanoseconds: UInt64?

    /// Waits at most `seconds` (at least a nanosecond).
    public static func seconds(_ seconds: Double) -> WaitLimit {
        WaitLimit(nanoseconds: UInt64(max(1, min(seconds * 1e9, 1e18))))
    }

    /// Waits at most `milliseconds`.
    public static func milliseconds(_ milliseconds: Int) -> WaitLimit {
        .seconds(Double(milliseconds) / 1_000)
    }

    /// Waits as long as the creation takes.
    public static let unlimited = WaitLimit(nanoseconds: nil)

    /// A minute: far longer than any factory should run, short enough that a hang is reported.
    public static let `default` = WaitLimit.seconds(60)

    public var description: String {
        guard let nanoseconds else { return "unlimited" }
        let seconds = Double(nanoseconds) / 1e9
        return seconds >= 1 ? "\(Self.format(seconds)) s" : "\(Self.format(seconds * 1_000)) ms"
    }

    /// `value` without a fraction when it has none: "60", "1.5".
    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
    }
}
