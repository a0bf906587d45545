/// A reused instance's `resolved` callback that needs an instance only an `await` can get: one that an `async`
/// factory makes, being made by this task's chain or not made yet. The callback is synchronous, so the instance
/// it was called for is cached meanwhile, and the `await` resolve that made it calls it again once the instance
/// it needs exists (Swinject's `initCompleted` with `async` factories, resolved from either side).
///
/// Unchecked: nothing in it changes, and its callback (which holds the instance, of any type) is called by one
/// task at a time: the `await` resolve it is handed to, or the creation it waits for, once it has let go.
@usableFromInline
final class AwaitingCallback: @unchecked Sendable {
    /// The scope the callback resolves from: the owner of the instance it was called for.
    let scope: Scope
    /// What the callback could not resolve without awaiting.
    let needed: ServiceKey
    /// Calls the callback again, on the calling thread's resolution path.
    private let callback: () throws(ResolutionError) -> Void

    init(scope: Scope, needed: ServiceKey, _ callback: @escaping () throws(ResolutionError) -> Void) {
        self.scope = scope
        self.needed = needed
        self.callback = callback
    }

    /// Calls the callback again now.
    func callAgain() throws(ResolutionError) {
        try callback()
    }

    /// Calls the callback again once what it needs exists: at once after awaiting that instance, or, when this
    /// task's chain of `async` factories is making it, when that creation has made it (the creation runs it;
    /// dropped if it fails). What the callback needs next, if it needs another such instance, is awaited in
    /// turn. Throws what the await or the callback throws: the instances stay made.
    nonisolated(nonsending) func callAgainWhenAwaited() async throws {
        var needed = self.needed
        var awaited: [ServiceKey] = []
        while true {
            if AsyncNode.current?.deferUntilMade(self, needing: needed) == true { return }
            try await scope.awaitInstance(needed)
            awaited.append(needed)
            guard let next = try callAgainOrFindNeed(besides: awaited) else { return }
            needed = next
        }
    }

    /// Calls the callback again: nil when it ran, or what it needs next when that is another instance only an
    /// `await` can get, one not awaited yet.
    private func callAgainOrFindNeed(besides awaited: [ServiceKey]) throws(ResolutionError) -> ServiceKey? {
        do {
            try callAgain()
            return nil
        } catch  where error.code == .requiresAwait && !error.requested.hasArguments && !awaited.contains(error.requested) {
            return error.requested
        }
    }

    /// Calls `callbacks` again, deferred until an instance they need was made, in order, each once what it needs
    /// exists (``callAgainWhenAwaited()``); throws the first error once all have run.
    @usableFromInline
    nonisolated(nonsending) static func callAgain(_ callbacks: [AwaitingCallback]) async throws {
        var firstError: (any Error)?
        for callback in callbacks {
            do {
                try await callback.callAgainWhenAwaited()
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }
}

extension Scope {
    /// Resolves the service of `key`, without runtime arguments, from this scope, awaiting it: the registration
    /// that this scope sees for it, found under the lock and resolved as an `await` resolve does.
    nonisolated(nonsending) func awaitInstance(_ key: ServiceKey) async throws {
        let registration: (any Registration)? = registry.lock.withLock { locked in
            scopeRegistration(for: key, locked)?.registration ?? registry.entries[key]?.registration
        }
        try await registration?.resolveAsync(from: self)
    }
}
