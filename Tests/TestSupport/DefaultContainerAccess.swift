import Foundation
import Stimpak

/// The one way tests set ``Container/default``, which is process-wide while the test targets' suites run in
/// parallel: one body at a time, across every test target, and the default restored after it.
public enum DefaultContainerAccess {
    private static let lock = NSLock()

    /// Runs `body` while no other test sets the default; restores the default `body` found.
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        let previous = Container.default
        defer { Container.default = previous }
        return try body()
    }
}
