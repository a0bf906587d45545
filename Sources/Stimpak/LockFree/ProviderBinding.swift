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
/// factory or returns the instance it keeps, without a lookup or a read section. A provider whose registration
/// only a locked resolve serves holds one without a registration, whose calls resolve.
///
/// The provider's only stored property, so that the provider is one reference, passed in a register, and a
/// call retains nothing. Unchecked `Sendable`: its stored properties are immutable (`key` is an `AnyHashable`,
/// and keys are documented to be immutable values), but for the word of the kept instance, written once (0 to
/// a retained box) by a compare-exchange and read atomically.
@usableFromInline
final class ProviderBinding<Service, Args>: @unchecked Sendable {
    /// The scope the provider resolves from (held: its words are read below).
    @usableFromInline let scope: Scope
    @usableFromInline let key: AnyHashable?
    /// The scope's disposed word, and the root's (a root singleton's instance lives until the root's disposal).
    @usableFromInline let disposedWord: AtomicWord
    @usableFromInline let rootDisposedWord: AtomicWord
    /// The registry's table word, and the bits of the table published when the binding was made; 1, which no
    /// table's address is, when there is no registration.
    @usableFromInline let tableWord: AtomicWord
    @usableFromInline let tableBits: UInt
    /// That table, held so that its address names it: no other table is allocated there while this one lives.
    private let table: LookupTable?
    /// The registration, held: its factory stays callable whatever the registry does with it.
    @usableFromInline let resolver: ServiceResolver<Service, Args>?
    /// For a reused service: 0, or a retained `InstanceBox<Service>` of the instance, written once. Nil for a
    /// transient.
    @usableFromInline let instanceWord: AtomicWord?

    /// A binding to `resolver`, found in `table` (see ``Scope/providerBinding(_:_:key:)``), or to nothing.
    init(
        scope: Scope, key: AnyHashable?, root: Scope, tableWord: AtomicWord,
        bound: (table: LookupTable, resolver: ServiceResolver<Service, Args>, isTransient: Bool)?
    ) {
        self.scope = scope
        self.key = key
        disposedWord = scope.disposedWord
        rootDisposedWord = root.disposedWord
        self.tableWord = tableWord
        table = bound?.table
        tableBits = bound.map { UInt(bitPattern: Unmanaged.passUnretained($0.table).toOpaque()) } ?? 1
        resolver = bound?.resolver
        instanceWord = bound.map { $0.isTransient } == false ? .allocate(count: 1) : nil
    }

    deinit {
        guard let instanceWord else { return }
        // Nobody else holds the binding, so nobody reads the word.
        if let box = instanceWord.loadPointer() { Unmanaged<InstanceBox<Service>>.fromOpaque(box).release() }
        instanceWord.deallocate()
    }

    /// Whether a resolve now would find what the binding holds: neither scope is disposed, and the table it
    /// bound to is still the published one.
    ///
    /// The root's word matters only for a kept instance, a root singleton's (for a transient, as for a resolve, the
    /// scope's own is enough: the root's disposal disposes every scope).
    @inlinable @inline(__always)
    var isCurrent: Bool {
        disposedWord.load() == 0 && tableWord.load() == tableBits
            && (instanceWord == nil || rootDisposedWord.load() == 0)
    }

    /// The instance, made by the factory or kept, when the binding is current; otherwise resolved as `require`
    /// resolves it.
    ///
    /// Inlined into the provider's caller: only the checks, the path push and the factory call are inline, and
    /// every other way out (a failed check, a first instance to keep, a cycle) is a call.
    @inlinable @inline(__always)
    func callAsFunction(_ arguments: Args) throws(ResolutionError) -> Service {
        guard isCurrent else { return try resolve(arguments) }
        guard let instanceWord else { return try make(arguments) }
        // Written once and released only by `deinit`: the caller's reference to the binding keeps the box alive.
        if let box = instanceWord.loadPointer() {
            return Unmanaged<InstanceBox<Service>>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.value }
        }
        return try resolveAndKeep(arguments)
    }

    /// Resolves as `require` does, with the registered alternatives in a `notRegistered` error (the errors of the
    /// bound path, a cycle, depth, a factory's failure, are the resolve's as they are). Specialized in the caller,
    /// but out of line: the call's own code stays small.
    @inlinable @inline(never)
    func resolve(_ arguments: Args) throws(ResolutionError) -> Service {
        try resolveLookingUp(arguments)
    }

    /// Resolves the service registered with runtime arguments of type `Arguments` as `require` does, looking the
    /// registration up: the fallback of a call, and a ``Provider`` called with arguments it is not bound to.
    @inlinable
    func resolveLookingUp<Arguments>(_ arguments: Arguments) throws(ResolutionError) -> Service {
        do {
            return try scope.resolveInstance(Service.self, arguments, key: key)
        } catch {
            throw scope.explained(error, fileID: "", line: 0)
        }
    }

    /// Calls the transient's factory with the registration pushed on the thread's path, as a resolve does
    /// (cycles and depth are detected the same way); the binding's reference, not a read section, keeps the
    /// registration alive.
    @inlinable @inline(__always)
    func make(_ arguments: Args) throws(ResolutionError) -> Service {
        let thread = stimpak_thread_get()
        // Current, so bound: `tableBits` is a table's only with a registration.
        let registration = Unmanaged.passUnretained(resolver.unsafelyUnwrapped).toOpaque()
        // A thread without a context has no path yet, and its stack limit refuses the push (2): the resolve
        // makes both.
        let status = stimpak_path_enter(
            thread, registration, Unmanaged.passUnretained(scope).toOpaque(), UInt(ResolutionError.maximumDepth))
        guard status == 0 else { return try refuse(status, arguments) }
        return try scope.makeTransient(registration, isCycle: false, arguments, thread: thread)
    }

    /// A push that found the registration on the path already (1: the cycle's error), or that was refused (2: a
    /// path too deep, which the resolve reports, or none made yet, which the resolve makes). Out of line, as
    /// every rare case.
    @inlinable @inline(never)
    func refuse(_ status: Int32, _ arguments: Args) throws(ResolutionError) -> Service {
        guard status == 1 else { return try resolve(arguments) }
        throw ResolutionContext.current.pathError(.dependencyCycle, resolver.unsafelyUnwrapped)
    }

    /// A reused service's first call: resolves as `require` does and keeps the instance (see ``keep(_:)``).
    @inlinable @inline(never)
    func resolveAndKeep(_ arguments: Args) throws(ResolutionError) -> Service {
        try keep(resolve(arguments))
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
