import CStimpakAtomics

/// A scope's words that lock-free readers load (its disposed flag and its published ``ScopeTable``), kept 64
/// bytes from the scope object's start, and the table the locked path fills and publishes.
extension Scope {
    /// Nonzero once disposed: `words.0`, 64 bytes from the object's start, so 48 from its first stored
    /// property (see `words`).
    @inlinable var disposedWord: AtomicWord {
        AtomicWord((_getUnsafePointerToStoredProperties(self) + 48).assumingMemoryBound(to: UInt.self))
    }
    /// This child scope's published ``ScopeTable`` (unretained: `table` owns it), or 0.
    @inlinable var tableWord: AtomicWord { disposedWord.advanced(by: 1) }
    /// The state's address of the thread that opened this child scope, while no other thread has read the scope's
    /// published table; ``sharedReaders`` from the first read on another thread (it never goes back), and for the
    /// root. On the line of `disposedWord`, which every resolve from the scope loads anyway (`lockWords.0`).
    var soleReaderWord: AtomicWord { disposedWord.advanced(by: 4) }
    /// ``soleReaderWord``'s value once more than one thread may have read the scope's table: no thread's state.
    static let sharedReaders: UInt = 1

    /// Whether no thread but this one has read this scope's published table and this one is inside no read
    /// section: then no reader can hold the table it unpublished, and its disposal retires it without a scan
    /// (``Scope/Detached/origin``). A seq-cst load: call after unpublishing the table (see ``scopedBoxBits(_:in:)``).
    var isTableReadByThisThreadAlone: Bool {
        let thread = stimpak_thread_get()
        return soleReaderWord.load() == UInt(bitPattern: thread) && stimpak_section_load(thread) & 1 == 0
    }
    /// Nonzero while this scope's disposal runs asynchronous hooks with it as ``Scope/hooksRunningInTask``:
    /// that task-local value outlives the hooks in the tasks they start, and names a disposal under way only
    /// while this is set. A padding word of `lockWords`, written once or twice in the scope's life.
    var asyncHooksRunningWord: AtomicWord { disposedWord.advanced(by: 5) }
    /// The lock of the state a disposal takes (`disposals`, `children`, `runningChildDisposals`,
    /// `waitingDisposal`, and the disposed flag's change), 64 bytes after `disposedWord` (see `lockWords`): taken
    /// with the container's lock held, or alone by a disposal that finds that lock busy, and never held while another
    /// scope's own lock is taken, except a child's before its parent's.
    var ownLock: WordLock {
        WordLock(word: UnsafeMutableRawPointer(disposedWord.address + 8).assumingMemoryBound(to: UInt32.self))
    }

    /// Runs `body`, which changes `children`, under this scope's own lock, with the container's held: a disposal
    /// without the container's lock reads them under it. The root's alone are changed without it: the root is
    /// never disposed that way, and its lock's word is not taken from its readers' caches on every request.
    @inline(__always)
    func changingChildren<Result>(_ body: () -> Result) -> Result {
        guard parent != nil else { return body() }
        return ownLock.withLock(body)
    }

    /// Sets the words through their atomic accessors, as every later access is (a plain store to a property
    /// that Swift code never reads again is one the optimizer may drop), after checking that `words` and
    /// `lockWords` are where they look: 64 bytes from the object's start, and 64 bytes further.
    func initializeWords(isDisposed: Bool, isRoot: Bool) {
        assert(
            withUnsafeMutablePointer(to: &words) { UnsafeMutableRawPointer($0) } == disposedWord.address
                && withUnsafeMutablePointer(to: &lockWords.4) { UnsafeMutableRawPointer($0) } == disposedWord.address + 8
                && UnsafeMutableRawPointer(disposedWord.address) == Unmanaged.passUnretained(self).toOpaque() + 64,
            "Scope.words must be 64 bytes from the object's start, and the last of its lockWords 64 bytes further")
        disposedWord.storeRelaxed(isDisposed ? 1 : 0)
        tableWord.storeRelaxed(0)
        soleReaderWord.storeRelaxed(isRoot ? Scope.sharedReaders : UInt(bitPattern: stimpak_thread_get()))
        asyncHooksRunningWord.storeRelaxed(0)
        disposedWord.advanced(by: 8).storeRelaxed(0)
    }

    /// Whether the scope is disposed. Set with `ownLock` held (and the container's, except in a disposal that
    /// finds it busy); read anywhere, atomically: `disposedWord` is what the lock-free path reads.
    var isDisposedValue: Bool {
        get { disposedWord.loadRelaxed() != 0 }
        set { disposedWord.store(newValue ? 1 : 0) }
    }

    // MARK: Caches

    /// This child scope's cache for the registration with `index`: a ``Slot`` or an ``InstanceCache``.
    func cache(for index: Int, _ locked: borrowing Locked) -> AnyObject? {
        table?.cache(for: index, locked)
    }

    /// Sets this child scope's cache for the registration with `index`, growing the table if it is full.
    func setCache(_ cache: AnyObject, for index: Int, _ locked: borrowing Locked) {
        tableWithRoom(locked)._withUnsafeGuaranteedRef { $0.set(cache, for: index, locked) }
    }

    /// Keeps `instance` (an ``InstanceBox`` when `isBox`), which this child scope made for `registration`, in
    /// its table as it is (see ``resolveInTable(_:_:owner:_:)``), with its creation number, and publishes it;
    /// the table holds `registration` when `pinned` (see ``ScopeTable/keep(_:isBox:of:pinned:creation:for:_:)``).
    func keep(
        _ instance: AnyObject, isBox: Bool, of registration: AnyObject, pinned: Bool, creation: Int, for index: Int,
        _ locked: borrowing Locked
    ) {
        tableWithRoom(locked)._withUnsafeGuaranteedRef {
            $0.keep(instance, isBox: isBox, of: registration, pinned: pinned, creation: creation, for: index, locked)
        }
    }

    /// This child scope's table, replaced by a larger copy first when another entry does not fit (published
    /// with the entries it took over; the new entry's index is stored atomically after). Unretained (`table`
    /// holds it, and only the lock's holder replaces it): a retained result cost a retain and a release per
    /// use.
    private func tableWithRoom(_ locked: borrowing Locked) -> Unmanaged<ScopeTable> {
        if let table {
            if table.hasRoom { return .passUnretained(table) }
            self.table = ScopeTable.make(growing: table, locked)
        } else {
            // A scope given values (a request's `Request`, id and logger) has room for them and for the few
            // services it then makes, without growing.
            self.table = ScopeTable.make(capacity: locals.isEmpty ? 4 : 8)
        }
        let larger = Unmanaged.passUnretained(table.unsafelyUnwrapped)
        larger._withUnsafeGuaranteedRef { tableWord.publish($0) }
        return larger
    }

    /// Drops this child scope's cache for `index` (see ``ScopeTable/clear(for:_:)``).
    func clearCache(for index: Int, _ locked: borrowing Locked) {
        table?.clear(for: index, locked)
    }

    /// This child scope's cache for `index` (unretained) and, for an instance kept as it is, its creation
    /// number (else 0).
    func tableEntry(for index: Int, _ locked: borrowing Locked) -> (cache: TableCache, creation: Int)? {
        table?.entry(for: index, locked).map { (TableCache(reference: $0.cache), $0.creation) }
    }

    /// Every cache of this child scope (slots, instance caches, instances kept as they are with their
    /// registrations and creation numbers).
    func tableCaches(_ locked: borrowing Locked) -> [(cache: AnyObject, kept: ScopeTable.Kept?)] {
        table?.caches(locked) ?? []
    }

    /// Publishes an `.inScope` instance (see ``CachedInstance``) of this child scope for the lock-free path;
    /// its cache is set.
    func publish(_ box: AnyObject, index: Int, _ locked: borrowing Locked) {
        table?.publish(box, for: index, locked)
    }
}

/// A cache that a scope's table holds, read without a retain: valid while the container's lock is held, since
/// only the lock's holder replaces or clears the entry.
struct TableCache {
    let reference: Unmanaged<AnyObject>

    /// The cache, retained.
    var object: AnyObject { reference.takeUnretainedValue() }

    /// Runs `body` with the cache, without retaining it.
    func withObject<Result>(_ body: (AnyObject) -> Result) -> Result {
        reference._withUnsafeGuaranteedRef(body)
    }
}
