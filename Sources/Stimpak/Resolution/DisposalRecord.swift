/// A cached instance's disposal, recorded when it is created.
struct DisposalRecord {
    let key: ServiceKey
    /// The slot the instance was cached in, to find the record again if the instance is evicted; nil for
    /// a tracked transient.
    let slot: Slot?
    let hook: Hook

    /// What the disposal runs. A `Disposable` or ``AsyncDisposable`` instance with no `onDispose` hook is kept as
    /// itself: a closure around it is a heap context per instance and, awaited, one more async frame.
    enum Hook {
        case sync(() throws -> Void)
        case async(() async throws -> Void)
        case disposable(any Disposable)
        case asyncDisposable(any AsyncDisposable)
    }

    init(key: ServiceKey, slot: Slot?, dispose: @escaping () throws -> Void) {
        self.key = key
        self.slot = slot
        hook = .sync(dispose)
    }

    init(key: ServiceKey, slot: Slot?, disposeAsync: @escaping () async throws -> Void) {
        self.key = key
        self.slot = slot
        hook = .async(disposeAsync)
    }

    init(key: ServiceKey, slot: Slot?, disposing instance: any Disposable) {
        self.key = key
        self.slot = slot
        hook = .disposable(instance)
    }

    init(key: ServiceKey, slot: Slot?, disposing instance: any AsyncDisposable) {
        self.key = key
        self.slot = slot
        hook = .asyncDisposable(instance)
    }

    var isAsync: Bool {
        switch hook {
        case .sync, .disposable: false
        case .async, .asyncDisposable: true
        }
    }

    /// Runs a synchronous hook; an asynchronous one is started in a task of its own (its failure is lost).
    func dispose() throws {
        switch hook {
        case .sync(let body): try body()
        case .disposable(let instance): try instance.dispose()
        case .async, .asyncDisposable: Self.runDetached([self])
        }
    }

    func disposeAwaiting() async throws {
        switch hook {
        case .sync(let body): try body()
        case .async(let body): try await body()
        case .disposable(let instance): try instance.dispose()
        case .asyncDisposable(let instance): try await instance.dispose()
        }
    }

    /// Runs the asynchronous hooks of `records`, in order, in one task, for a synchronous disposal.
    static func runDetached(_ records: [DisposalRecord]) {
        let hooks = UncheckedSendable(
            records.compactMap { record -> (() async throws -> Void)? in
                switch record.hook {
                case .sync, .disposable: nil
                case .async(let body): body
                case .asyncDisposable(let instance): { try await instance.dispose() }
                }
            })
        Task {
            for hook in hooks.value { try? await hook() }
        }
    }
}

extension DisposalRecord {
    /// A decorated instance's record: runs `outermost` (the record of the instance handed out, if it has one),
    /// then disposes `layers`, the layers under it, in order (outermost first). Each runs when one before it
    /// throws; every error is reported (``DisposalErrors``).
    init(key: ServiceKey, slot: Slot?, disposing outermost: DisposalRecord?, then layers: [InstanceDisposal]) {
        let isAsync = outermost?.isAsync == true || layers.contains { if case .async = $0 { true } else { false } }
        guard isAsync else {
            self.init(
                key: key, slot: slot,
                dispose: {
                    var errors = DisposalErrors()
                    // Synchronous (the record is not `isAsync`): runs in line.
                    do { try outermost?.dispose() } catch { errors.append(error) }
                    for case .sync(let layer) in layers {
                        do { try layer.dispose() } catch { errors.append(error) }
                    }
                    try errors.throwIfAny()
                })
            return
        }
        self.init(
            key: key, slot: slot,
            disposeAsync: {
                var errors = DisposalErrors()
                do { try await outermost?.disposeAwaiting() } catch { errors.append(error) }
                for layer in layers {
                    do {
                        switch layer {
                        case .sync(let disposable): try disposable.dispose()
                        case .async(let disposable): try await disposable.dispose()
                        case .none: break
                        }
                    } catch {
                        errors.append(error)
                    }
                }
                try errors.throwIfAny()
            })
    }
}

/// The errors of one record's hooks when more than one threw (an `onDispose` hook and the instance's own
/// `dispose()`, a decorated instance's layers): each becomes a ``DisposalFailure`` of its own, for the caller of
/// `dispose()` and the observer. Allocates only when a hook throws.
struct DisposalErrors: Error {
    private(set) var errors: [any Error] = []

    mutating func append(_ error: any Error) {
        // A record nested in another (a decorated instance's own) reports its errors one by one too.
        if let nested = error as? DisposalErrors { errors.append(contentsOf: nested.errors) } else { errors.append(error) }
    }

    /// Throws nothing, the one error, or all of them.
    func throwIfAny() throws {
        guard let first = errors.first else { return }
        if errors.count == 1 { throw first }
        throw self
    }

    /// The errors that `error`, thrown by a record's hook, stands for.
    static func each(_ error: any Error) -> [any Error] {
        (error as? DisposalErrors)?.errors ?? [error]
    }
}

extension InstanceDisposal {
    /// How `value`, a layer of a decorated instance, disposes itself.
    static func of<Value>(_ value: Value) -> InstanceDisposal {
        if let disposable = value as? any Disposable { return .sync(disposable) }
        if let disposable = value as? any AsyncDisposable { return .async(disposable) }
        return .none
    }

    /// The object that disposes itself; nil for `.none`.
    var object: AnyObject? {
        switch self {
        case .none: nil
        case .sync(let disposable): disposable
        case .async(let disposable): disposable
        }
    }

    /// The `layers` of a decorated instance (innermost first) that dispose themselves, outermost first, each
    /// object once and none that is `outermost`: a decorator that returns the instance it got adds no layer,
    /// so that instance is disposed once.
    static func distinct<Service>(_ layers: [InstanceDisposal], under outermost: Service) -> [InstanceDisposal] {
        var seen = of(outermost).object.map { [ObjectIdentifier($0)] } ?? []
        var distinct: [InstanceDisposal] = []
        for layer in layers.reversed() {
            guard let object = layer.object, !seen.contains(ObjectIdentifier(object)) else { continue }
            seen.append(ObjectIdentifier(object))
            distinct.append(layer)
        }
        return distinct
    }
}

extension DisposeHook {
    /// Whether the hook replaces the instance's own `dispose()` (and so its layers').
    var replacesDispose: Bool {
        switch self {
        case .sync(_, let replaces), .async(_, let replaces): replaces
        }
    }
}

/// A value handed to another task that only that task uses from then on.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// How an instance disposes itself (see ``ServiceRegistration/disposal(of:)``).
@usableFromInline
enum InstanceDisposal {
    case none
    case sync(any Disposable)
    case async(any AsyncDisposable)
}

/// A registration's `onDispose` callback.
@usableFromInline
enum DisposeHook<Service> {
    case sync(@Sendable (Service) throws -> Void, replacesDispose: Bool)
    case async(@Sendable (Service) async throws -> Void, replacesDispose: Bool)
}

/// What happens to a `Disposable` instance of a transient registration.
enum DisposableTransients {
    /// Disposed at once and refused with ``ResolutionError/Code/disposableTransient``: nobody would dispose it.
    case refused
    /// Kept by the resolving scope and disposed with it.
    case tracked
    /// Handed out; the caller disposes it.
    case allowed
}
