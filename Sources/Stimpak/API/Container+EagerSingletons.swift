extension Container {
    /// Makes every `.eagerSingleton` now, in registration order, and reports every failure at once.
    ///
    /// Call it at start-up, so that a singleton that cannot be made (a missing dependency, a factory that
    /// throws) is found before the first request needs it. Singletons already made are not made again;
    /// calling it twice, or from several threads, makes each one once.
    ///
    /// ```swift
    /// do {
    ///     try container.makeEagerSingletons()
    /// } catch {
    ///     print(error)   // every eager singleton that failed, and why
    /// }
    /// ```
    /// - Throws: ``EagerSingletonFailures``, listing each failure, when any failed; the others are made.
    /// - Parameters:
    ///   - fileID: The caller's file, for the failures' messages.
    ///   - line: The caller's line.
    public func makeEagerSingletons(fileID: String = #fileID, line: Int = #line) throws(EagerSingletonFailures) {
        let eager = eagerSingletons
        var failures: [ResolutionError] = []
        for registration in eager {
            do {
                try registration.makeEagerly(from: root)
            } catch {
                failures.append(root.explained(error, fileID: fileID, line: line))
            }
        }
        guard failures.isEmpty else { throw EagerSingletonFailures(failures: failures, attempted: eager.count) }
    }

    /// Makes every `.eagerSingleton` now, in registration order, awaiting those whose factory is `async`
    /// (or runs on the main actor), and reports every failure at once.
    ///
    /// ```swift
    /// try await container.makeEagerSingletons()   // connects the database (an async factory) up front
    /// ```
    /// - Throws: ``EagerSingletonFailures``, listing each failure, when any failed; the others are made.
    /// - Parameters:
    ///   - fileID: The caller's file, for the failures' messages.
    ///   - line: The caller's line.
    public func makeEagerSingletons(fileID: String = #fileID, line: Int = #line) async throws(EagerSingletonFailures) {
        let eager = eagerSingletons
        var failures: [ResolutionError] = []
        for registration in eager {
            do {
                try await registration.makeEagerly(from: root)
            } catch {
                failures.append(root.explained(error, fileID: fileID, line: line))
            }
        }
        guard failures.isEmpty else { throw EagerSingletonFailures(failures: failures, attempted: eager.count) }
    }

    /// The eager singletons, in registration order.
    private var eagerSingletons: [any Registration] {
        registry.lock.withLock { _ in
            registry.entries.values.compactMap { entry -> (any Registration)? in
                guard let registration = entry.registration, registration.reuse.isEager else { return nil }
                return registration
            }
        }
        .sorted { $0.index < $1.index }
    }
}

/// The eager singletons that `Container/makeEagerSingletons()` could not make, each with its error.
public struct EagerSingletonFailures: Error, Sendable, CustomStringConvertible {
    /// Each failure, in registration order.
    public let failures: [ResolutionError]
    /// How many eager singletons there were.
    public let attempted: Int

    public var description: String {
        var text = "Stimpak could not make \(failures.count) of \(attempted) eager singletons:"
        for failure in failures { text += "\n- \(failure.description)" }
        return text
    }
}
