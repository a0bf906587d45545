import CStimpakAtomics

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
    // `key`, `parent`, `rootRef`, `registry`, `sequence` and `words` never change; every `var` is guarded
    // by `registry.lock`, the one lock of the container; `words` are written under it and read atomically
    // by the lock-free path.

    /// The key the scope was opened with; nil for the container's root scope.
    public let key: AnyHashable?
    /// The scope this one was opened from; nil for the root scope.
    public let parent: Scope?
    private let rootRef: Scope?
    @usableFromInline let registry: Registry
    /// Opening order among siblings, so that disposal can go in reverse.
    private let sequence: Int
    /// Word 0: nonzero once disposed. Word 1: the published ``ScopeSlots`` (unretained), or 0.
    @usableFromInline let words: UnsafeMutablePointer<UInt>

    private var children: [AnyHashable: Scope] = [:]
    private var nextChildSequence = 0
    /// This scope's caches, by registration index (the root scope's live on the registrations instead).
    var caches: [Int: AnyObject] = [:]
    /// Values put here with `provide`, by the key they resolve under.
    var locals: [ServiceKey: Any] = [:]
    /// Cached instances with a disposal hook, in order of creation.
    var disposals: [DisposalRecord] = []
    /// The `.inScope` instances published for the lock-free path, and the full copies it replaced.
    private var slots: ScopeSlots?
    private var retiredSlots: [ScopeSlots] = []

    init(root registry: Registry) {
        self.key = nil
        self.parent = nil
        self.rootRef = nil
        self.registry = registry
        self.sequence = 0
        self.words = Self.makeWords(isDisposed: false)
    }

    private init(key: AnyHashable, parent: Scope, sequence: Int, isDisposed: Bool) {
        self.key = key
        self.parent = parent
        self.rootRef = parent.root
        self.registry = parent.registry
        self.sequence = sequence
        self.words = Self.makeWords(isDisposed: isDisposed)
    }

    private static func makeWords(isDisposed: Bool) -> UnsafeMutablePointer<UInt> {
        let words = UnsafeMutablePointer<UInt>.allocate(capacity: 2)
        words.initialize(to: isDisposed ? 1 : 0)
        (words + 1).initialize(to: 0)
        return words
    }

    deinit {
        words.deallocate()
    }

    /// Whether the scope is disposed. Set with the lock held.
    var isDisposedValue: Bool {
        get { stimpak_load_relaxed(words) != 0 }
        set { stimpak_store(words, newValue ? 1 : 0) }
    }

    /// Publishes an `.inScope` instance of this (child) scope for the lock-free path. Call with the lock held.
    func publish(_ box: UInt, index: Int) {
        if let slots, slots.append(index: index, box: box) { return }
        let larger = ScopeSlots(capacity: max(4, (slots?.capacity ?? 0) * 2), copying: slots)
        _ = larger.append(index: index, box: box)
        if let slots { retiredSlots.append(slots) }
        slots = larger
        stimpak_store(words + 1, UInt(bitPattern: Unmanaged.passUnretained(larger).toOpaque()))
    }

    /// The container's root scope, where singletons live.
    public var root: Scope { rootRef ?? self }

    /// This scope itself.
    @inlinable
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
        let retired: UInt = registry.lock.withLock {
            guard !isDisposedValue else { return 0 }
            locals[serviceKey] = value
            guard registry.entries[serviceKey]?.hasScopeLocals != true else { return 0 }
            // From now on this key goes through the locked path, which searches the scopes.
            registry.entries[serviceKey, default: Registry.Entry()].hasScopeLocals = true
            return registry.retireTable()
        }
        Registry.release(retiredTable: retired)
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
                stimpak_store(scope.words + 1, 0)
                records.append(contentsOf: scope.disposals.reversed())
                released.append(scope.caches)
                released.append(scope.locals)
                released.append((scope.slots, scope.retiredSlots))
                scope.disposals = []
                scope.caches = [:]
                scope.locals = [:]
                scope.children = [:]
                scope.slots = nil
                scope.retiredSlots = []
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
        guard !released.isEmpty else { return [] }
        // Lock-free readers may still hold the published instances: let them finish first.
        ResolutionContext.waitForReaders()
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
