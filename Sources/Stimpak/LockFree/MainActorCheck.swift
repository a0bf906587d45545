import CStimpakAtomics

/// Whether the calling code runs on the main actor, asked without stopping the program when it does not
/// (`MainActor.assumeIsolated` stops it).
enum MainActorCheck {
    static var isCurrent: Bool {
        #if canImport(Darwin)
        // Apple platforms run the main actor on the main thread, always.
        return stimpak_is_main_thread() != 0
        #else
        // Elsewhere the main queue may be drained by another thread (after `dispatch_main`, as a server's or a
        // test runner's async `main` does): ask the runtime, with the executor's two words.
        let executor = unsafeBitCast(MainActor.shared.unownedExecutor, to: (UnsafeRawPointer?, UInt).self)
        return stimpak_is_current_executor(executor.0, executor.1) != 0
        #endif
    }
}
