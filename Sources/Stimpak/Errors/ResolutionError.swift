/// Why a service could not be resolved, with what to do about it.
///
/// `require` throws it; `resolve` returns nil in the same cases. Nothing in it is formatted until
/// ``description`` is read, so a failed `resolve` costs no string building.
public struct ResolutionError: Error, @unchecked Sendable, CustomStringConvertible {
    // Unchecked for `scopeKey`, an `AnyHashable` (see ``ServiceKey``), and for ``Fields``, which an error writes
    // only while it is still local to the thread that made it, after copying them if another error shares them.

    /// The kind of failure. New codes may be added without breaking the API.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: Hashable, Sendable {
            case notRegistered
            case dependencyCycle
            case scopeDisposed
            case factoryFailed
            case resolutionTooDeep
            case waitTimedOut
            case noMatchingScope
            case eagerSingletonWithArguments
            case weakValueType
            case captiveDependency
            case disposableTransient
            case noCurrentScope
            case requiresAwait
            case registeredAfterDisposal
        }

        let base: Base

        /// Nothing is registered for the service type, arguments type and key.
        public static let notRegistered = Code(base: .notRegistered)
        /// The service depends, directly or not, on itself.
        public static let dependencyCycle = Code(base: .dependencyCycle)
        /// The scope (or container) it was resolved from has been disposed.
        public static let scopeDisposed = Code(base: .scopeDisposed)
        /// The registration's factory, or its `resolved` callback, threw.
        public static let factoryFailed = Code(base: .factoryFailed)
        /// Nested resolutions went deeper than ``ResolutionError/maximumDepth``, or close to the end of the
        /// thread's stack.
        public static let resolutionTooDeep = Code(base: .resolutionTooDeep)
        /// Another thread's or task's creation of the same instance took longer than the container's ``WaitLimit``.
        public static let waitTimedOut = Code(base: .waitTimedOut)
        /// A `.scopedTo` service was resolved where neither the resolving scope nor any of its ancestors
        /// matches.
        public static let noMatchingScope = Code(base: .noMatchingScope)
        /// An `.eagerSingleton` takes runtime arguments, so `Container/makeEagerSingletons()` cannot make it.
        public static let eagerSingletonWithArguments = Code(base: .eagerSingletonWithArguments)
        /// A `.weak` registration's factory made a value (struct, enum), which cannot be referenced weakly.
        public static let weakValueType = Code(base: .weakValueType)
        /// A long-lived service (a singleton) resolved a shorter-lived one (`.inScope`, `.scopedTo`), which it
        /// would keep past the end of its scope.
        public static let captiveDependency = Code(base: .captiveDependency)
        /// A `.transient` registration made a `Disposable` instance, which nobody would dispose.
        public static let disposableTransient = Code(base: .disposableTransient)
        /// An injection (a property wrapper, `inject`, ``Scope/current``) found no current scope: none is bound
        /// with ``Scope/withCurrent(_:)`` and ``Container/default`` is not set.
        public static let noCurrentScope = Code(base: .noCurrentScope)
        /// A service whose factory is `async` was resolved synchronously (or from a synchronous factory):
        /// resolve it with `try await scope.require(...)`.
        public static let requiresAwait = Code(base: .requiresAwait)
        /// A registration was made on a container that was disposed: it was refused (found by
        /// ``Container/validate()``).
        public static let registeredAfterDisposal = Code(base: .registeredAfterDisposal)

        public var description: String {
            switch base {
            case .notRegistered: return "notRegistered"
            case .dependencyCycle: return "dependencyCycle"
            case .scopeDisposed: return "scopeDisposed"
            case .factoryFailed: return "factoryFailed"
            case .resolutionTooDeep: return "resolutionTooDeep"
            case .waitTimedOut: return "waitTimedOut"
            case .noMatchingScope: return "noMatchingScope"
            case .eagerSingletonWithArguments: return "eagerSingletonWithArguments"
            case .weakValueType: return "weakValueType"
            case .captiveDependency: return "captiveDependency"
            case .disposableTransient: return "disposableTransient"
            case .noCurrentScope: return "noCurrentScope"
            case .requiresAwait: return "requiresAwait"
            case .registeredAfterDisposal: return "registeredAfterDisposal"
            }
        }
    }

    /// How many resolutions may nest inside one another before Stimpak stops. It also stops earlier when
    /// less than 64 KB of the thread's stack is left, so that a small stack (512 KB on Apple platforms'
    /// secondary threads and dispatch queues) never overflows, in debug builds either.
    public static let maximumDepth = 128

    /// Every field of the error, in one object: a `ResolutionError` is one reference, so a thrown error is
    /// returned in a register and a copy is a retain. Copied on write, and written only while the error is
    /// still local to the thread that made it, so no access needs the runtime's exclusivity check.
    @usableFromInline
    final class Fields {
        @exclusivity(unchecked) @usableFromInline var code: Code
        @exclusivity(unchecked) @usableFromInline var requested: ServiceKey
        @exclusivity(unchecked) @usableFromInline var path: [ServiceKey]
        @exclusivity(unchecked) @usableFromInline var registeredAlternatives: [ServiceKey]
        @exclusivity(unchecked) @usableFromInline var underlyingError: (any Error)? = nil
        @exclusivity(unchecked) @usableFromInline var scopeKey: AnyHashable? = nil
        @exclusivity(unchecked) @usableFromInline var creatorWaitingFor: ServiceKey? = nil
        @exclusivity(unchecked) @usableFromInline var waitLimit: WaitLimit? = nil
        @exclusivity(unchecked) @usableFromInline var isTaskWait: Bool = false
        @exclusivity(unchecked) @usableFromInline var reuse: Reuse? = nil
        @exclusivity(unchecked) @usableFromInline var captor: ServiceKey? = nil
        @exclusivity(unchecked) @usableFromInline var captorReuse: Reuse? = nil
        @exclusivity(unchecked) @usableFromInline var isProvidedElsewhere: Bool = false
        @exclusivity(unchecked) @usableFromInline var isRegisteredElsewhere: Bool = false
        @exclusivity(unchecked) @usableFromInline var isAwaitableHere: Bool = false
        @exclusivity(unchecked) @usableFromInline var handsOverPlace: Bool = false
        @exclusivity(unchecked) @usableFromInline var isMainActor: Bool = false
        @exclusivity(unchecked) @usableFromInline var synchronousUse: String? = nil
        @exclusivity(unchecked) @usableFromInline var awaitingCallback: AwaitingCallback? = nil
        @exclusivity(unchecked) @usableFromInline var isWeakReference: Bool = false
        @exclusivity(unchecked) @usableFromInline var isDisposableLayer: Bool = false
        @exclusivity(unchecked) @usableFromInline var resolvedFromRoot: Bool = false
        @exclusivity(unchecked) @usableFromInline var searchedScopeKeys: [AnyHashable?] = []
        @exclusivity(unchecked) @usableFromInline var fileID: String = ""
        @exclusivity(unchecked) @usableFromInline var line: Int = 0

        init(code: Code, requested: ServiceKey, path: [ServiceKey], underlyingError: (any Error)?, scopeKey: AnyHashable?) {
            self.code = code
            self.requested = requested
            self.path = path
            self.registeredAlternatives = []
            self.underlyingError = underlyingError
            self.scopeKey = scopeKey
        }

        /// A copy of `other`, for a write to an error that shares its fields.
        init(copying other: Fields) {
            code = other.code
            requested = other.requested
            path = other.path
            registeredAlternatives = other.registeredAlternatives
            underlyingError = other.underlyingError
            scopeKey = other.scopeKey
            creatorWaitingFor = other.creatorWaitingFor
            waitLimit = other.waitLimit
            isTaskWait = other.isTaskWait
            reuse = other.reuse
            captor = other.captor
            captorReuse = other.captorReuse
            isProvidedElsewhere = other.isProvidedElsewhere
            isRegisteredElsewhere = other.isRegisteredElsewhere
            isAwaitableHere = other.isAwaitableHere
            handsOverPlace = other.handsOverPlace
            isMainActor = other.isMainActor
            synchronousUse = other.synchronousUse
            awaitingCallback = other.awaitingCallback
            isWeakReference = other.isWeakReference
            isDisposableLayer = other.isDisposableLayer
            resolvedFromRoot = other.resolvedFromRoot
            searchedScopeKeys = other.searchedScopeKeys
            fileID = other.fileID
            line = other.line
        }
    }

    @usableFromInline var fields: Fields

    /// The fields, to write: copied first when another error shares them.
    private mutating func writableFields() -> Fields {
        if !isKnownUniquelyReferenced(&fields) { fields = Fields(copying: fields) }
        return fields
    }

    /// Makes this awaitable `requiresAwait` (a thread's ``ResolutionContext/handedToAwait``) name `requested`:
    /// in place when no other error shares its fields, as after the `await` resolve that caught it last.
    mutating func rename(_ requested: ServiceKey, isMainActor: Bool) {
        let fields = writableFields()
        fields.requested = requested
        fields.isMainActor = isMainActor
    }

    /// What went wrong.
    @inlinable public var code: Code { fields.code }
    /// What was asked for: service type, arguments type and key.
    @inlinable public var requested: ServiceKey { fields.requested }
    /// The resolution path, outermost first, ending with the registration that failed.
    ///
    /// For a cycle it ends where it started: `A → B → A`.
    public internal(set) var path: [ServiceKey] {
        @inlinable get { fields.path }
        set { writableFields().path = newValue }
    }
    /// For ``Code/notRegistered``: what is registered for the same service type under other keys or arguments.
    public internal(set) var registeredAlternatives: [ServiceKey] {
        @inlinable get { fields.registeredAlternatives }
        set { writableFields().registeredAlternatives = newValue }
    }
    /// For ``Code/factoryFailed``: the error the factory threw.
    @inlinable public var underlyingError: (any Error)? { fields.underlyingError }
    /// For ``Code/scopeDisposed``: the key of the disposed scope (nil for the container's root scope).
    @inlinable public var scopeKey: AnyHashable? { fields.scopeKey }
    /// For ``Code/waitTimedOut``: what the thread making the instance was itself waiting for, when it was
    /// waiting for another thread's creation; nil when it was running a factory or callback.
    public internal(set) var creatorWaitingFor: ServiceKey? {
        @inlinable get { fields.creatorWaitingFor }
        set { writableFields().creatorWaitingFor = newValue }
    }
    /// For ``Code/waitTimedOut``: the limit that expired.
    public internal(set) var waitLimit: WaitLimit? {
        @inlinable get { fields.waitLimit }
        set { writableFields().waitLimit = newValue }
    }
    /// For ``Code/waitTimedOut``: an `await` resolve waited for an `async` creation (a task's), not a thread.
    var isTaskWait: Bool {
        get { fields.isTaskWait }
        set { writableFields().isTaskWait = newValue }
    }
    /// For ``Code/noMatchingScope`` and ``Code/captiveDependency``: the requested registration's reuse; for
    /// ``Code/dependencyCycle``, the reuse of the registration the cycle met again, when it is known.
    public internal(set) var reuse: Reuse? {
        @inlinable get { fields.reuse }
        set { writableFields().reuse = newValue }
    }
    /// For ``Code/captiveDependency``: the long-lived registration that would capture the service.
    public internal(set) var captor: ServiceKey? {
        @inlinable get { fields.captor }
        set { writableFields().captor = newValue }
    }
    /// For ``Code/captiveDependency``: the captor's reuse.
    public internal(set) var captorReuse: Reuse? {
        @inlinable get { fields.captorReuse }
        set { writableFields().captorReuse = newValue }
    }
    /// For ``Code/notRegistered``: a value of the service was put into some scope with `provide`, one that
    /// the resolving scope does not see.
    var isProvidedElsewhere: Bool {
        get { fields.isProvidedElsewhere }
        set { writableFields().isProvidedElsewhere = newValue }
    }
    /// For ``Code/notRegistered``: some scope has a registration of it (`scope.register`), one that the
    /// resolving scope does not see.
    var isRegisteredElsewhere: Bool {
        get { fields.isRegisteredElsewhere }
        set { writableFields().isRegisteredElsewhere = newValue }
    }
    /// For ``Code/requiresAwait``: thrown for the resolve itself, not from inside a synchronous factory, so an
    /// `async` resolve may go on and await the creation.
    @usableFromInline var isAwaitableHere: Bool {
        @inlinable get { fields.isAwaitableHere }
        set { writableFields().isAwaitableHere = newValue }
    }
    /// For an awaitable ``Code/requiresAwait``: the synchronous attempt found the empty slot of an `async` factory
    /// and handed it to the `async` resolve in the thread's context (``ResolutionContext/handOver(_:of:)``).
    @usableFromInline var handsOverPlace: Bool {
        @inlinable get { fields.handsOverPlace }
        set { writableFields().handsOverPlace = newValue }
    }
    /// For ``Code/requiresAwait``: the factory runs on the main actor (and this was another thread).
    var isMainActor: Bool {
        get { fields.isMainActor }
        set { writableFields().isMainActor = newValue }
    }
    /// For ``Code/requiresAwait``: the property wrapper (`@Injected`) or the reference (`Lazy<Feed>`) that
    /// resolves the service synchronously, whatever its owner's factory is; nil for a factory's own resolve.
    var synchronousUse: String? {
        get { fields.synchronousUse }
        set { writableFields().synchronousUse = newValue }
    }
    /// For an awaitable ``Code/requiresAwait``: the instance is made and cached, and its `resolved` callback
    /// waits for an instance only an `await` can get, which the `async` resolve awaits before running it again.
    @usableFromInline var awaitingCallback: AwaitingCallback? {
        @inlinable get { fields.awaitingCallback }
        set { writableFields().awaitingCallback = newValue }
    }
    /// For ``Code/weakValueType``: a ``WeakReference`` (or ``WeakInjected``) resolved a value, not a `.weak`
    /// registration.
    var isWeakReference: Bool {
        get { fields.isWeakReference }
        set { writableFields().isWeakReference = newValue }
    }
    /// For ``Code/disposableTransient``: the instance is not `Disposable`, an instance its decorators wrap is.
    var isDisposableLayer: Bool {
        get { fields.isDisposableLayer }
        set { writableFields().isDisposableLayer = newValue }
    }
    /// For ``Code/notRegistered``: it was resolved from the container's root scope.
    var resolvedFromRoot: Bool {
        get { fields.resolvedFromRoot }
        set { writableFields().resolvedFromRoot = newValue }
    }
    /// For ``Code/noMatchingScope``: the keys of the scopes searched, from the resolving one to the root
    /// (nil for the root).
    public internal(set) var searchedScopeKeys: [AnyHashable?] {
        @inlinable get { fields.searchedScopeKeys }
        set { writableFields().searchedScopeKeys = newValue }
    }
    /// The file of the `require` call that failed.
    public internal(set) var fileID: String {
        @inlinable get { fields.fileID }
        set { writableFields().fileID = newValue }
    }
    /// The line of the `require` call that failed.
    public internal(set) var line: Int {
        @inlinable get { fields.line }
        set { writableFields().line = newValue }
    }

    init(
        _ code: Code,
        requested: ServiceKey,
        path: [ServiceKey] = [],
        underlyingError: (any Error)? = nil,
        scopeKey: AnyHashable? = nil
    ) {
        fields = Fields(
            code: code, requested: requested, path: path, underlyingError: underlyingError, scopeKey: scopeKey)
    }

    /// The resolution path as text, `A → B → A`. A long one (a runaway recursion) shows its start, how many
    /// steps are left out, its end, and the part that repeats.
    public var pathDescription: String {
        let names = path.map(\.description)
        guard names.count > 12 else { return names.joined(separator: " → ") }
        var text = names.prefix(4).joined(separator: " → ")
        text += " → … \(names.count - 8) more … → " + names.suffix(4).joined(separator: " → ")
        // The shortest unit of services (keys aside: a runaway often passes a new key each time) that the last
        // steps repeat.
        let services = path.map { ServiceKey(service: $0.service, arguments: $0.arguments).description }
        for period in 1...min(16, services.count / 3) {
            let tail = services.suffix(period * 3)
            let unit = Array(tail.suffix(period))
            if tail.enumerated().allSatisfy({ $0.element == unit[$0.offset % period] }) {
                text += " (repeating: " + unit.joined(separator: " → ") + ")"
                break
            }
        }
        return text
    }

    /// For ``Code/notRegistered``: when the arguments are a labelled tuple and a registration takes the same
    /// tuple without labels, a sentence that says so.
    private var labelledArgumentsHint: String? {
        let requestedArguments = String(describing: requested.arguments)
        guard requestedArguments.hasPrefix("("), requestedArguments.contains(":") else { return nil }
        let unlabelled = Self.withoutLabels(requestedArguments)
        guard
            let match = registeredAlternatives.first(where: {
                String(describing: $0.arguments) == unlabelled && $0.key == requested.key
            })
        else { return nil }
        return " The arguments \(requestedArguments) have labels, which make them another type than"
            + " \(String(describing: match.arguments)), the arguments of \(match.description): drop the labels, e.g."
            + " pass (\"Bill\", \"Gates\") rather than (first: \"Bill\", last: \"Gates\")."
    }

    /// A tuple type's description without its element labels: `(first: String, last: String)` → `(String, String)`.
    private static func withoutLabels(_ tuple: String) -> String {
        var result = ""
        var word = ""
        for character in tuple {
            if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
            } else if character == ":" {
                word = ""
            } else {
                result += word
                word = ""
                if !(character == " " && (result.last == "(" || result.last == " ")) { result.append(character) }
            }
        }
        return result + word
    }

    public var description: String {
        var text: String
        switch code.base {
        case .notRegistered:
            text = "Stimpak has no registration for \(requested.description)"
            text += " (service \(String(describing: requested.service)), arguments \(String(describing: requested.arguments))"
            text += requested.key.map { ", key \(String(reflecting: $0.base)))" } ?? ", no key)"
            text += "."
            if registeredAlternatives.isEmpty {
                text += " Nothing is registered for \(String(describing: requested.service)) under any key or arguments."
            } else {
                text += " Registered for \(String(describing: requested.service)): "
                text += registeredAlternatives.map(\.description).joined(separator: ", ") + "."
            }
            text += pathSuffix
            if let labelled = labelledArgumentsHint { text += labelled }
            if isRegisteredElsewhere {
                text += " It is registered in a scope (scope.register), but resolved from"
                text +=
                    resolvedFromRoot
                    ? " the container's root scope, which sees only the container's registrations (a singleton's factory resolves from the root)."
                    : " a scope that is not that one or below it."
                text += " Fix: resolve it from the scope that registered it or one below, or register it in the container"
                text += " for every scope, e.g. container.register(\(String(describing: requested.service)).self) { ... }."
            } else if isProvidedElsewhere {
                text += " A value of it was put into a scope with provide(_:), but it is resolved from"
                text +=
                    resolvedFromRoot
                    ? " the container's root scope, where that value is not visible (a singleton's factory resolves from the root)."
                    : " a scope that is not that one or below it."
                text += " Fix: make the service that needs it .inScope or .scopedTo(...), so that it resolves from the"
                text += " scope that holds the value, or register \(String(describing: requested.service)) itself."
            } else {
                text += " Fix: register it, e.g. container.register(\(String(describing: requested.service)).self) { ... }"
                text += ", or resolve with the key and argument types of an existing registration."
            }
        case .dependencyCycle:
            text = "Stimpak found a dependency cycle while resolving \(requested.description): \(pathDescription)."
            text += " Fix: break the cycle, e.g. let one side receive the other after creation in a"
            text += " resolved { scope, instance in ... } callback instead of in its factory."
        case .scopeDisposed:
            if let scopeKey {
                text = "Stimpak cannot resolve \(requested.description): the scope \(String(reflecting: scopeKey.base)) has been disposed."
                text += pathSuffix
                text += " Fix: resolve from a scope that is still open, or open a new one with openScope(_:) on its parent."
            } else {
                text = "Stimpak cannot resolve \(requested.description): the container has been disposed, and with it every"
                text += " scope and singleton."
                text += pathSuffix
                text += " Fix: keep the container alive (undisposed) while anything resolves from it, or make a new"
                text += " Container and register again: a disposed container resolves nothing and opens no scope."
            }
        case .factoryFailed:
            text = "The factory of \(requested.description) threw: \(underlyingError.map { String(describing: $0) } ?? "an error")."
            text += pathSuffix
            text += " Fix: make the factory succeed for this input; the error above says why it did not."
        case .resolutionTooDeep:
            if path.count > Self.maximumDepth {
                text = "Stimpak stopped resolving \(requested.description): more than \(Self.maximumDepth) resolutions"
                text += " nested inside one another."
            } else {
                text = "Stimpak stopped resolving \(requested.description) after \(path.count) nested resolutions:"
                text += " the thread's stack is nearly used up."
            }
            text += " Resolution path: \(pathDescription)."
            text += " Fix: look for a factory that resolves a service with ever new arguments from inside itself,"
            text += " or resolve deep graphs on a thread with a larger stack."
        case .noMatchingScope:
            let wanted = reuse?.wantedScopeDescription ?? "a matching scope"
            text = "Stimpak cannot resolve \(requested.description): it is registered \(reuse?.description ?? ".scopedTo"),"
            text += " and no scope between the resolving one and the root is \(wanted)."
            let searched = searchedScopeKeys.map { $0.map { String(reflecting: $0.base) } ?? "root" }
            text += " Searched: \(searched.joined(separator: " → "))."
            text += pathSuffix
            if searchedScopeKeys.count == 1 {
                text += " (A singleton's factory resolves from the root, so it cannot depend on a scoped service.)"
            }
            text += " Fix: resolve it from \(wanted) or a scope opened below one, or register it with another reuse."
        case .captiveDependency:
            let captorName = captor?.description ?? "a singleton"
            text = "Stimpak refused to let \(captorName) (\(captorReuse?.description ?? ".singleton")) depend on"
            text += " \(requested.description) (\(reuse?.description ?? ".inScope")): it would keep that one instance for the"
            text += " whole container, long after the scope it belongs to is gone (a captive dependency)."
            text += pathSuffix
            text += " Fix: give \(captorName) a shorter reuse, take a Provider<\(String(describing: requested.service))> or"
            text += " Lazy<\(String(describing: requested.service))> and resolve it when needed from the right scope, or, if"
            text += " this is meant, call .allowCaptiveDependencies() on \(captorName)'s registration."
        case .disposableTransient:
            text = "Stimpak refused a \(requested.description): "
            text += isDisposableLayer ? "an instance its decorators wrap is Disposable" : "it is Disposable"
            text += " and registered .transient, so nobody"
            text += " would dispose it (Stimpak disposed the instance it made)."
            text += pathSuffix
            text += " Fix: register it .inScope or .singleton so that its scope disposes it, call"
            text += " .trackDisposableTransients() on the registration to have the resolving scope dispose each"
            text += " instance with itself, or .allowDisposableTransient() if the caller disposes it."
        case .weakValueType where isWeakReference:
            text = "Stimpak cannot refer to \(requested.description) weakly: a WeakReference or @WeakInjected asked for"
            text += " it, but it resolved to a value, not a class instance, and only class instances can be referenced"
            text += " weakly." + pathSuffix
            text += " Fix: hold it with Lazy<\(String(describing: requested.service))> or @LazyInjected (a value is"
            text += " copied anyway), or make the type a class (or its protocol class-constrained: `protocol P: AnyObject`)."
        case .weakValueType:
            text = "Stimpak cannot keep \(requested.description) weakly: it is registered .weak, but its factory made a"
            text += " value, not a class instance, and only class instances can be referenced weakly."
            text += pathSuffix
            text += " Fix: register it .singleton (a value is copied anyway) or .transient, or make the type a class."
        case .eagerSingletonWithArguments:
            text = "Stimpak cannot make \(requested.description) up front: it is registered .eagerSingleton but takes"
            text += " runtime arguments (\(String(describing: requested.arguments))), which only a resolve can pass."
            text += " Fix: register it .singleton, or give it a factory without runtime arguments."
        case .registeredAfterDisposal:
            text = "Stimpak refused the registration of \(requested.description): the container had been disposed, so it"
            text += " would never resolve anything. Fix: register before disposing the container, or make a new"
            text += " Container for the new registrations."
        case .requiresAwait where synchronousUse != nil:
            let use = synchronousUse ?? ""
            let service = String(describing: requested.service)
            text = "Stimpak cannot resolve \(requested.description) for \(use)"
            if path.count > 1 { text += " in \(path[path.count - 2].description)" }
            text += ": \(service)'s factory is async, and "
            text +=
                use.hasPrefix("@")
                ? "a property wrapper resolves synchronously (@Injected and @OptionalInjected when their owner is made,"
                    + " @LazyInjected and @WeakInjected on first read), so it cannot await it."
                : "\(use) resolves synchronously when it is read, so it cannot await it."
            text += pathSuffix
            text += " Fix: resolve it in async code with try await scope.require(\(service).self) (in an async factory"
            text += " or initializer, or the handler) and pass it in, or give \(service) a synchronous factory."
        case .requiresAwait:
            text =
                isMainActor
                ? "Stimpak cannot resolve \(requested.description) synchronously here: its factory runs on the main actor,"
                    + " and this is not the main thread."
                : "Stimpak cannot resolve \(requested.description) synchronously: its factory is async."
            text += pathSuffix
            if path.count > 1 {
                text += " A synchronous factory cannot await it. Fix: make the factory of"
                text += " \(path[path.count - 2].description) async too and resolve it with try await scope.require(...),"
                text += " or resolve it in the async code that needs it."
            } else {
                text += " Fix: resolve it with try await scope.require(\(String(describing: requested.service)).self) from async"
                text += " code; a synchronous resolve never blocks a thread waiting for an async creation."
            }
        case .noCurrentScope:
            text = "Stimpak has no scope to resolve \(requested.description) from: no scope is bound with"
            text += " scope.withCurrent { ... } around this code, and no default container is set."
            text += " Fix: set Container.default = container once at start-up, before the first injection, or create"
            text += " the object inside scope.withCurrent { ... } (a Task.detached or a dispatch queue's work does not"
            text += " inherit the binding: bind it again there)."
        case .waitTimedOut:
            let creator = isTaskWait ? "task" : "thread"
            text = "Stimpak gave up resolving \(requested.description) after waiting \(waitLimit?.description ?? "")"
            text += " for another \(creator) to finish creating it."
            if let creatorWaitingFor {
                text += " That \(creator) was itself waiting for \(creatorWaitingFor.description) to be created."
            } else {
                text += " That \(creator) was still running its factory or resolved callback."
            }
            text += pathSuffix
            if isTaskWait {
                text += " This is usually a deadlock Stimpak cannot see: an async factory that awaits work outside"
                text += " its resolution (a Task.detached, a continuation another task resumes) that resolves the"
                text += " same instance. Fix: resolve what that work needs before awaiting it, or resolve it in the"
                text += " factory itself (a child task inherits the resolution and reports a cycle);"
            } else {
                text += " This is usually a deadlock Stimpak cannot see: a factory that blocks (DispatchQueue.sync, a"
                text += " semaphore, a lock) on work that resolves the same instance on another thread."
                text += " Fix: resolve what that work needs before blocking, or don't block inside a factory;"
            }
            text += " if the creation is merely slow, raise the limit with Container(waitLimit:)."
        }
        if !fileID.isEmpty { text += " (require at \(fileID):\(line))" }
        return text
    }

    private var pathSuffix: String {
        path.count > 1 ? " Resolution path: \(pathDescription)." : ""
    }
}
