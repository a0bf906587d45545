import CStimpakAtomics

// A provider's handle on its registration (ARCHITECTURE.md, "Bound providers", gives the argument):
//
// - bind: under the container's lock, a provider finds what a lock-free resolve would find for its service
//   (a transient's factory, or a reused instance's cache) and holds, strongly, the registration, the scope and
//   the published table of that moment.
// - call: no read section. The provider checks two words: the scope (and the root) is not disposed, and the
//   registry's table word still holds the table it bound to. Every change that could make a resolve find
//   something else (register, unregister, `.replace`, a setting, a decorator, `provide`, a scope's
//   registration, an observer) retires the table; the provider holds that table, so no later table is
//   allocated at its address and the comparison cannot pass for a changed world. When it fails, the call
//   resolves as `require` does.
// - what it reads after the check it owns: the registration (its factory), the scope, and the instance it
//   keeps. Nothing it reads is published memory that a writer may reclaim, so it needs no read section.

/// A provider's registration, found once when the provider is made (as DryIoc compiles a registration to a
/// delegate once): a call checks that the registrations and the scope are as they were, then calls the
/// factory or returns the instance it keeps, without a lookup or a read section.
///
/// Unchecked `Sendable`: its stored properties are immutable, but for the word of the kept instance, written
/// once (0 to a retained box) by a compare-exchange and read atomically.
@usableFromInline
final class ProviderBinding<Service, Args>: @unchecked Sendable {
    /// The scope the provider resolves from (held: its words are read below).
    @usableFromInline let scope: Scope
    /// The scope's disposed word, and the root's (a root singleton's instance lives until the root's disposal).
    @usableFromInline let disposedWord: AtomicWord
    @usableFromInline let rootDisposedWord: AtomicWord
    /// The registry's table word, and the bits of the table published when the binding was made.
    @usableFromInline let tableWord: AtomicWord
    @usableFromInline let tableBits: UInt
    /// That table, held so that its address names it: no other table is allocated there while this one lives.
    private let table: LookupTable
    /// The registration, held: its factory stays callable whatever the registry does with it.
    @usableFromInline let resolver: ServiceResolver<Service, Args>
    /// For a reused service: 0, or a retained `InstanceBox<Service>` of the instance, written once. Nil for a
    /// transient.
    @usableFromInline let instanceWord: AtomicWord?

    init(
        scope: Scope, root: Scope, table: LookupTable, tableWord: AtomicWord, resolver: ServiceResolver<Service, Args>,
        isTransient: Bool
    ) {
        self.scope = scope
        disposedWord = scope.disposedWord
        rootDisposedWord = root.disposedWord
        self.table = table
        self.tableWord = tableWord
        tableBits = UInt(bitPattern: Unmanaged.passUnretained(table).toOpaque())
        self.resolver = resolver
        instanceWord = isTransient ? nil : .allocate(count: 1)
    }

    deinit {
        guard let instanceWord else { return }
        // Nobody else holds the binding, so nobody reads the word.
        if let box = instanceWord.loadPointer() { Unmanaged<InstanceBox<Service>>.fromOpaque(box).release() }
        instanceWord.deallocate()
    }

    /// Whether a resolve now would find what the binding holds: neither scope is disposed, and the table it
    /// bound to is still the published one.
    @inlinable @inline(__always)
    var isCurrent: Bool {
        disposedWord.load() == 0 && rootDisposedWord.load() == 0 && tableWord.load() == tableBits
    }

    /// The instance, made by the factory or kept, when the binding is current; otherwise `resolve()`, which
    /// resolves as `require` does.
    @inlinable @inline(__always)
    func callAsFunction(
        _ arguments: Args, orResolve resolve: () throws(ResolutionError) -> Service
    ) throws(ResolutionError) -> Service {
        guard isCurrent else { return try resolve() }
        guard let instanceWord else { return try make(arguments, orResolve: resolve) }
        // Written once and released only by `deinit`: the caller's reference to the binding keeps the box alive.
        if let box = instanceWord.loadPointer() {
            return Unmanaged<InstanceBox<Service>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
        }
        return try keep(resolve())
    }

    /// Calls the transient's factory with the registration pushed on the thread's path, as a resolve does
    /// (cycles and depth are detected the same way); the binding's reference, not a read section, keeps the
    /// registration alive.
    @inlinable @inline(__always)
    func make(_ arguments: Args, orResolve resolve: () throws(ResolutionError) -> Service) throws(ResolutionError) -> Service {
        let thread = stimpak_thread_get()
        // A thread's path is made with its context, on its first resolve; too deep, the resolve reports it.
        guard thread.pointee.context != nil else { return try resolve() }
        let status = stimpak_path_enter(
            thread, Unmanaged.passUnretained(resolver).toOpaque(), Unmanaged.passUnretained(scope).toOpaque(),
            UInt(ResolutionError.maximumDepth))
        guard status != 2 else { return try resolve() }
        return try scope.makeTransient(
            Unmanaged.passUnretained(resolver).toOpaque(), isCycle: status == 1, arguments, thread: thread)
    }

    /// Keeps `instance`, which a resolve of the bound registration returned, for the next calls; the first
    /// kept wins, and every call returns it (a reused service's resolves return one instance anyway).
    @usableFromInline
    func keep(_ instance: Service) -> Service {
        guard let instanceWord else { return instance }
        let box = Unmanaged.passRetained(InstanceBox(instance))
        var expected: UInt = 0
        let bits = UInt(bitPattern: box.toOpaque())
        if stimpak_compare_exchange(instanceWord.address, &expected, bits) != 0 { return instance }
        box.release()
        return Unmanaged<InstanceBox<Service>>.fromOpaque(UnsafeRawPointer(bitPattern: expected).unsafelyUnwrapped)
            .takeUnretainedValue().value
    }
}
