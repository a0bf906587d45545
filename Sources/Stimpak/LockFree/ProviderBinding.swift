import CStimpakAtomics

// A provider's handle on its registration (ARCHITECTURE.md, "Bound providers", gives the argument):
//
// - bind: under the container's lock, a provider finds what a lock-free resolve would find for its service
//   (a transient's factory, or where a reused instance is published) and holds the registration and the scope
//   strongly, and the published table of that moment unowned (its address stays reserved; its registrations go
//   with it).
// - call: the provider checks two words: the scope is not disposed, and the registry's table word still holds
//   the table it bound to. Every change that could make a resolve find something else (register, unregister,
//   `.replace`, a setting, a decorator, `provide`, a scope's registration, an observer) retires the table; no
//   later table is allocated at its address while the provider holds it, so the comparison cannot pass for a
//   changed world. When it fails, the call resolves as `require` does.
// - a transient's call reads, after the check, only what it owns (the registration and its factory, the scope):
//   no read section. A reused service's call loads the published instance (the registration's root word, or
//   the scope's table) inside a read section, as a resolve does, and keeps nothing: the instance stays its
//   cache's, which the scope's disposal releases.

/// A provider's registration, found once when the provider is made (as DryIoc compiles a registration to a
/// delegate once): a call checks that the registrations and the scope are as they were, then calls the
/// factory, or loads the published instance where a resolve would find it, without a lookup. A provider whose
/// registration only a locked resolve serves holds one without a registration, whose calls resolve.
///
/// The provider's only stored property, so that the provider is one reference, passed in a register, and a
/// call retains nothing but the instance. Unchecked `Sendable`: its stored properties are immutable (`key` is
/// an `AnyHashable`, and keys are documented to be immutable values).
@usableFromInline
final class ProviderBinding<Service, Args>: @unchecked Sendable {
    /// The scope the provider resolves from (held: its words are read below).
    @usableFromInline let scope: Scope
    @usableFromInline let key: AnyHashable?
    /// The scope's disposed word.
    @usableFromInline let disposedWord: AtomicWord
    /// The registry's table word, and the bits of the table published when the binding was made; 1, which no
    /// table's address is, when there is no registration.
    @usableFromInline let tableWord: AtomicWord
    @usableFromInline let tableBits: UInt
    /// That table, unowned so that its address names it: no other object is allocated there while the binding
    /// lives, and the table's registrations are released with it (a provider keeps only its own registration).
    private unowned let table: LookupTable?
    /// The registration, held: its factory stays callable, and its root word allocated, whatever the registry does
    /// with it.
    @usableFromInline let resolver: ServiceResolver<Service, Args>?
    /// Where a reused service's instance is published: `.root`, the registration's root word (a singleton);
    /// `.scoped`, the scope's table, at the registration's `index`; nil for a transient.
    @usableFromInline let published: LookupTable.Route?
    /// The registration's root word (allocated while the registration is held), and its index.
    @usableFromInline let rootWord: AtomicWord?
    @usableFromInline let index: Int

    /// A binding to `resolver`, found in `table` (see ``Scope/providerBinding(_:_:key:)``), or to nothing.
    init(
        scope: Scope, key: AnyHashable?, tableWord: AtomicWord,
        bound: (table: LookupTable, resolver: ServiceResolver<Service, Args>, route: LookupTable.Route)?
    ) {
        self.scope = scope
        self.key = key
        disposedWord = scope.disposedWord
        self.tableWord = tableWord
        table = bound?.table
        tableBits = bound.map { UInt(bitPattern: Unmanaged.passUnretained($0.table).toOpaque()) } ?? 1
        resolver = bound?.resolver
        published = bound.flatMap { $0.route == .transient ? nil : $0.route }
        rootWord = bound?.resolver.rootWord
        index = bound?.resolver.index ?? 0
    }

    /// Whether a resolve now would find what the binding holds: the scope is not disposed, and the table it bound
    /// to is still the published one.
    @inlinable @inline(__always)
    var isCurrent: Bool {
        disposedWord.load() == 0 && tableWord.load() == tableBits
    }

    /// The instance, made by the factory or found where it is published, when the binding is current; otherwise
    /// resolved as `require` resolves it.
    ///
    /// Inlined into the provider's caller: only the checks, the path push and the factory call (or the published
    /// instance's load) are inline, and every other way out (a failed check, an instance not made yet, a cycle)
    /// is a call.
    @inlinable @inline(__always)
    func callAsFunction(_ arguments: Args) throws(ResolutionError) -> Service {
        guard isCurrent else { return try resolve(arguments) }
        guard let published else { return try make(arguments) }
        // Inside a read section, as a resolve loads it: a disposal or an unregister may release it meanwhile.
        let section = ReadSection.enter(from: scope)
        let bits = published == .root ? rootWord.unsafelyUnwrapped.load() : scope.tableBoxBits(index, in: section)
        guard let box = UnsafeMutableRawPointer(bitPattern: bits) else {
            section.leave()
            return try resolve(arguments)
        }
        return section.leave(copying: box, as: Service.self)
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

}

extension ProviderBinding: CustomReflectable {
    /// What `dump` and a debugger show: the key and whether calls go straight to the registration. Not the
    /// table, which may have been released: reading an `unowned` reference to it then stops the program.
    @usableFromInline var customMirror: Mirror {
        Mirror(self, children: ["key": key as Any, "isBound": isCurrent], displayStyle: .class)
    }
}
