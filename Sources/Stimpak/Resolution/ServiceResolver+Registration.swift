import CStimpakAtomics

/// What the resolve path asks of a registration (``Registration``): its route, how its instances dispose
/// themselves, whether it is kept in a scope's table, its eager creation, validation's findings.
extension ServiceRegistration {
    /// How `instance` disposes itself: as a `Disposable`, as an `AsyncDisposable`, or not at all. The last
    /// dynamic type found to be neither is remembered, so that the runtime's conformance lookups (two casts,
    /// thousands of instructions) run only when the type changes or conforms; the first found to conform gets a
    /// ``DisposalMaker``, which makes the disposal of its instances without a lookup (a cast to that type,
    /// about a hundred instructions, where the cast to the protocol took seven to nine hundred); another that
    /// conforms is remembered in the word as `AsyncDisposable` (its bits with the second bit set, type metadata
    /// being aligned), so that only the cast that succeeds runs: a cast that fails costs about 1,600
    /// instructions. An `Optional` or an `AnyHashable` is never remembered: the casts look inside it, so the next
    /// value of the same type (a `Disposable` after a nil) may conform.
    func disposal(of instance: Service) -> InstanceDisposal {
        let type = dynamicType(of: instance)
        let bits = UInt(bitPattern: ObjectIdentifier(type))
        let check = disposableCheck.loadRelaxed()
        if check == bits { return .none }
        if let maker = disposalMakerWord.loadPointer() {
            let disposal = Unmanaged<DisposalMaker<Service>>.fromOpaque(maker)._withUnsafeGuaranteedRef {
                $0.type == bits ? $0.make(instance) : nil
            }
            if let disposal { return disposal }
        }
        if check == bits | 2, let disposable = instance as? any AsyncDisposable { return .async(disposable) }
        if let disposable = instance as? any Disposable {
            // Stored only when it changes: a store takes the word's cache line from the threads that read the
            // published words beside it.
            if check != bits | 1 { disposableCheck.storeRelaxed(bits | 1) }
            if !castsLookInside(type) { keep(DisposalMaker(type: bits, disposable)) }
            return .sync(disposable)
        }
        if let disposable = instance as? any AsyncDisposable {
            if !castsLookInside(type) {
                disposableCheck.storeRelaxed(bits | 2)
                keep(DisposalMaker(type: bits, disposable))
            }
            return .async(disposable)
        }
        if !castsLookInside(type) { disposableCheck.storeRelaxed(bits) }
        return .none
    }

    /// Keeps `maker` for the next instances of its type, unless one is kept already: the first one stays.
    private func keep(_ maker: DisposalMaker<Service>) {
        guard disposalMakerWord.loadRelaxed() == 0 else { return }
        let retained = Unmanaged.passRetained(maker)
        var expected: UInt = 0
        if stimpak_compare_exchange(disposalMakerWord.address, &expected, UInt(bitPattern: retained.toOpaque())) == 0 {
            retained.release()
        }
    }

    /// Whether a new `instance` needs no ``DisposalRecord``: no `onDispose` hook, and the container did not
    /// make it, or its dynamic type is the one last found to be neither `Disposable` nor `AsyncDisposable`.
    /// One word compared, where making the record (nil) copies the instance and switches over the hooks;
    /// false means "make the record", which looks the conformances up when the type is new.
    func needsNoDisposalRecord(_ instance: Service, onDispose: DisposeHook<Service>?) -> Bool {
        guard case nil = onDispose else { return false }
        return !disposesInstances
            || disposableCheck.loadRelaxed() == UInt(bitPattern: ObjectIdentifier(dynamicType(of: instance)))
    }

    /// Whether a child scope keeps its instance in its table as it is, with no ``Slot`` (see
    /// ``Scope/resolveInTable(_:_:owner:_:)``): `.inScope` or `.scopedTo`, arguments ignored, no `resolved`
    /// callback, a synchronous factory.
    func isKeptInTable(_ locked: borrowing Locked) -> Bool {
        (reuse.kind == .inScope || reuse.kind == .scopedTo) && ignoresArguments && !hasResolvedCallback && !hasAsyncFactory
    }

    /// Whether a child scope keeps the instance in its table as it is when an `await` makes it (see
    /// ``Scope/keepsInTableAwaiting(_:_:)``): as ``isKeptInTable(_:)``, for an `async` factory (not a main-actor
    /// one's, which the synchronous path makes on the main thread).
    func isKeptInTableAwaiting(_ locked: borrowing Locked) -> Bool {
        (reuse.kind == .inScope || reuse.kind == .scopedTo) && ignoresArguments && !hasResolvedCallback && isAsync
    }

    /// Whether a synchronous resolve on this thread cannot make an instance: the factory is `async`, or runs
    /// on the main actor and this is not the main thread.
    var requiresAwaitHere: Bool {
        guard hasAsyncFactory else { return false }
        return !isMainActor || !MainActorCheck.isCurrent
    }

    func route(_ locked: borrowing Locked) -> LookupTable.Route? {
        switch reuse.kind {
        case .transient:
            guard !hasAsyncFactory else { return nil }
            return !hasResolvedCallback && disposableTransients != .tracked && decoratorsIfAny == nil ? .transient : nil
        case .graph:
            return nil
        case .singleton, .inScope, .scopedTo, .weak:
            guard ignoresArguments else { return nil }
            switch reuse.kind {
            case .singleton: return .root
            case .weak: return .weakRoot
            default: return .scoped
            }
        }
    }

    func attach(_ decorator: AnyDecorator, _ locked: borrowing Locked) {
        // It applies to this service type, so the cast succeeds; it runs once, here, not per creation.
        if let typed = decorator.typed(Service.self) { decoratorsIfAny = (decoratorsIfAny ?? []) + [typed] }
    }

    func makeEagerly(from root: Scope) throws(ResolutionError) {
        guard ObjectIdentifier(Args.self) == ObjectIdentifier(Void.self), let arguments = () as? Args else {
            throw ResolutionError(.eagerSingletonWithArguments, requested: serviceKey)
        }
        _ = try root.resolveInstance(Service.self, arguments, key: serviceKey.key)
    }

    func makeEagerly(from root: Scope) async throws(ResolutionError) {
        guard ObjectIdentifier(Args.self) == ObjectIdentifier(Void.self), let arguments = () as? Args else {
            throw ResolutionError(.eagerSingletonWithArguments, requested: serviceKey)
        }
        do {
            _ = try await root.resolveInstanceAsync(Service.self, arguments, key: serviceKey.key)
        } catch let error as ResolutionError {
            throw error
        } catch {
            // Cancelled while it waited for another task's creation.
            throw ResolutionError(.factoryFailed, requested: serviceKey, underlyingError: error)
        }
    }

    func declaredDependencies(_ locked: borrowing Locked) -> [Dependency]? { dependencyList }

    func rootCacheObject(_ locked: borrowing Locked) -> AnyObject? { rootCache }

    @inlinable var isAsync: Bool { hasAsyncFactory && !isMainActor }

    func registrationFindings(_ locked: borrowing Locked) -> [ResolutionError] {
        var findings: [ResolutionError] = []
        if reuse.kind == .weak, Self.isValueType(Service.self) {
            findings.append(ResolutionError(.weakValueType, requested: serviceKey))
        }
        // An optional service is judged by its wrapped type: a value of it that is there is refused.
        let madeType = unwrappingOptionals(Service.self)
        if reuse.kind == .transient, disposableTransients == .refused,
            madeType is any Disposable.Type || madeType is any AsyncDisposable.Type
        {
            findings.append(ResolutionError(.disposableTransient, requested: serviceKey))
        }
        if reuse.isEager, serviceKey.hasArguments {
            findings.append(ResolutionError(.eagerSingletonWithArguments, requested: serviceKey))
        }
        return findings
    }

    func copy(_ locked: borrowing Locked) -> any RegistrationCopy {
        ServiceRegistrationCopy(
            original: self, dependencies: dependencyList, matching: matching, onResolved: onResolved,
            onDispose: onDispose, allowsCaptiveDependencies: allowsCaptiveDependencies, decorators: decoratorsIfAny,
            disposableTransients: disposableTransients)
    }

    func resolveAsync(from scope: Scope) async throws {
        guard let arguments = () as? Args else { return }
        _ = try await scope.resolveInstanceAsync(Service.self, arguments, key: serviceKey.key)
    }

    func takeRootCache(_ locked: borrowing Locked) -> AnyObject? {
        rootWord.publish(nil)
        isRootCacheTaken = true
        defer { rootCache = nil }
        return rootCache
    }
}

/// A ``ServiceRegistration``'s settings, read under its container's lock, beside the registration, whose other
/// properties (its key, reuse and factories) never change.
struct ServiceRegistrationCopy<Args, Service>: RegistrationCopy {
    let original: ServiceRegistration<Args, Service>
    let dependencies: [Dependency]?
    let matching: ArgumentMatching<Args>
    let onResolved: (@Sendable (Scope, Service) throws -> Void)?
    let onDispose: DisposeHook<Service>?
    let allowsCaptiveDependencies: Bool
    let decorators: [Decorator<Service>]?
    let disposableTransients: DisposableTransients

    func register(in registry: Registry, index: Int, _ locked: borrowing Locked) -> any Registration {
        let copy = ServiceResolver(
            keyBox: original.serviceKey.keyBox, reuse: original.reuse, index: index, registry: registry,
            disposesInstances: original.disposesInstances, dependencies: dependencies, factory: original.factory,
            asyncFactory: original.asyncFactory, isMainActor: original.isMainActor, locked)
        copy.matching = matching
        copy.onResolved = onResolved
        copy.onDispose = onDispose
        copy.allowsCaptiveDependencies = allowsCaptiveDependencies
        copy.decoratorsIfAny = decorators
        copy.disposableTransients = disposableTransients
        return copy
    }
}

/// Makes the ``InstanceDisposal`` of instances of one dynamic type, `type`, which conforms to `Disposable` or
/// `AsyncDisposable`: made from a first instance, opened as its own type, so that the next ones are cast to that
/// type (a comparison of metadata), not to the protocol (a lookup of the conformance in the runtime's cache).
final class DisposalMaker<Service>: @unchecked Sendable {  // immutable
    /// The dynamic type's `ObjectIdentifier` bits.
    let type: UInt
    let make: (Service) -> InstanceDisposal

    init(type: UInt, _ first: any Disposable) {
        self.type = type
        func maker<Conforming: Disposable>(_: Conforming) -> (Service) -> InstanceDisposal {
            { .sync($0 as! Conforming) }
        }
        make = maker(first)
    }

    init(type: UInt, _ first: any AsyncDisposable) {
        self.type = type
        func maker<Conforming: AsyncDisposable>(_: Conforming) -> (Service) -> InstanceDisposal {
            { .async($0 as! Conforming) }
        }
        make = maker(first)
    }
}

/// Whether a dynamic cast of a value of `type` looks inside the value: an `Optional` casts its wrapped value
/// (or fails, when nil), an `AnyHashable` its base. Two values of such a type may differ in what they
/// conform to, so what one of them conforms to is not remembered for the type.
func castsLookInside(_ type: any Any.Type) -> Bool {
    type is any OptionalValue.Type || type == AnyHashable.self
}

/// `type` without the `Optional`s around it: `Connection` for `Connection??`.
func unwrappingOptionals(_ type: any Any.Type) -> any Any.Type {
    var type = type
    while let optional = type as? any OptionalValue.Type { type = optional.wrappedType }
    return type
}

/// Conformed to by every `Optional`, to recognize one and its wrapped type from its type.
protocol OptionalValue {
    static var wrappedType: any Any.Type { get }
}

extension Optional: OptionalValue {
    static var wrappedType: any Any.Type { Wrapped.self }
}
