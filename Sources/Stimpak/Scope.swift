/// A node of the container's scope tree, with its own instance cache: one per request, screen or session.
///
/// Open one with ``Resolving/openScope(_:)`` on the container or on another scope. A scope resolves like
/// the container; `.inScope` services resolved from it live in it, and are disposed with it.
///
/// ```swift
/// let request = container.openScope(requestID)
/// request.provide(httpRequest)
/// let handler = try request.require(Handler.self)
/// request.dispose()
/// ```
public final class Scope: Resolving, @unchecked Sendable {
    // `key`, `parent`, `rootRef`, `registry` and `sequence` never change; every `var` is guarded by
    // `registry.lock`, the one lock of the container.

    /// The key the scope was opened with; nil for the container's root scope.
    public let key: AnyHashable?
    /// The scope this one was opened from; nil for the root scope.
    public let parent: Scope?
    private let rootRef: Scope?
    let registry: Registry
    /// Opening order among siblings, so that disposal can go in reverse.
    private let sequence: Int

    private var children: [AnyHashable: Scope] = [:]
    private var nextChildSequence = 0
    /// This scope's caches, by registration index (the root scope's live on the registrations instead).
    var caches: [Int: AnyObject] = [:]
    /// Values put here with `provide`, by the key they resolve under.
    var locals: [ServiceKey: Any] = [:]
    /// Cached instances with a disposal hook, in order of creation.
    var disposals: [DisposalRecord] = []
    var isDisposedValue: Bool

    init(root registry: Registry) {
        self.key = nil
        self.parent = nil
        self.rootRef = nil
        self.registry = registry
        self.sequence = 0
        self.isDisposedValue = false
    }

    private init(key: AnyHashable, parent: Scope, sequence: Int, isDisposed: Bool) {
        self.key = key
        self.parent = parent
        self.rootRef = parent.root
        self.registry = parent.registry
        self.sequence = sequence
        self.isDisposedValue = isDisposed
    }

    /// The container's root scope, where singletons live.
    public var root: Scope { rootRef ?? self }

    /// This scope itself.
    public var resolutionScope: Scope { self }

    /// Whether the scope has been disposed; a disposed scope resolves nothing and opens nothing.
    public var isDisposed: Bool {
        registry.lock.withLock { isDisposedValue }
    }

    /// Opens a child scope, or returns the open child that already has `key`.
    ///
    /// Opening from a disposed scope returns a scope that is disposed too.
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable) -> Scope {
        registry.lock.withLock {
            if let existing = children[key] { return existing }
            nextChildSequence += 1
            let child = Scope(key: key, parent: self, sequence: nextChildSequence, isDisposed: isDisposedValue)
            if !isDisposedValue { children[key] = child }
            return child
        }
    }

    /// The open child scope with `key`, if any.
    public subscript(key: AnyHashable) -> Scope? {
        registry.lock.withLock { children[key] }
    }

    /// Puts an existing value into this scope, so that it resolves here and in the scopes below, and
    /// nowhere else. It takes precedence over a registration of the same type and key.
    ///
    /// The scope does not dispose it: whoever made it owns it. Does nothing on a disposed scope.
    /// - Parameters:
    ///   - value: The value, for example the current request.
    ///   - type: The type it resolves as; defaults to the value's static type.
    ///   - key: The key it resolves under, or nil.
    public func provide<Service>(_ value: Service, as type: Service.Type = Service.self, key: AnyHashable? = nil) {
        let serviceKey = ServiceKey(service: Service.self, key: key)
        registry.lock.withLock {
            guard !isDisposedValue else { return }
            locals[serviceKey] = value
            registry.entries[serviceKey, default: Registry.Entry()].hasScopeLocals = true
        }
    }

    /// Disposes this scope and everything below it.
    ///
    /// Deepest scopes first, siblings in reverse order of opening; in each scope, the cached instances
    /// in reverse order of creation. A hook that throws does not stop the others. Then the scope is
    /// detached from its parent. Disposing twice does nothing.
    /// - Returns: The disposal hooks that threw, empty when all succeeded.
    @discardableResult
    public func dispose() -> [DisposalFailure] {
        var records: [DisposalRecord] = []
        var released: [Any] = []
        registry.lock.withLock {
            guard !isDisposedValue else { return }
            for scope in subtreeDeepestFirst() {
                scope.isDisposedValue = true
                records.append(contentsOf: scope.disposals.reversed())
                released.append(scope.caches)
                released.append(scope.locals)
                scope.disposals = []
                scope.caches = [:]
                scope.locals = [:]
                scope.children = [:]
            }
            if let parent, let key, parent.children[key] === self {
                parent.children[key] = nil
            }
            if parent == nil {
                for entry in registry.entries.values {
                    if let cache = entry.registration?.takeRootCache() { released.append(cache) }
                }
            }
        }
        var failures: [DisposalFailure] = []
        for record in records {
            do {
                try record.dispose()
            } catch {
                failures.append(DisposalFailure(service: record.key, error: error))
            }
        }
        // Instances are released here, after their hooks and outside the lock, so deinits may resolve.
        records = []
        released = []
        return failures
    }

    /// Every scope of this subtree, each after all its descendants. Iterative, so depth costs no stack.
    private func subtreeDeepestFirst() -> [Scope] {
        var preorder: [Scope] = []
        var stack: [Scope] = [self]
        while let scope = stack.popLast() {
            preorder.append(scope)
            stack.append(contentsOf: scope.children.values.sorted { $0.sequence > $1.sequence })
        }
        return preorder.reversed()
    }
}
