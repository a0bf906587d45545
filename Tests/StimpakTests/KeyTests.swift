import Stimpak
import Testing

/// Keys passed with their own type take the typed lookup; these tests pin that it answers exactly what the
/// `AnyHashable` lookup answers, for every kind of key and on both the lock-free and the locked path.
@Suite("Keys")
struct KeyTests {
    enum Flavor: Hashable { case vanilla, chocolate }

    @Test("a typed key finds the instance the AnyHashable key finds", arguments: [Reuse.transient, .singleton, .inScope])
    func typedAndErasedAgree(reuse: Reuse) throws {
        let container = Container()
        let counter = Counter()
        container.register(Foo.self, reuse: reuse, key: "x") {
            counter.increment(); return Foo()
        }
        container.register(Foo.self, reuse: reuse, key: 7) { Foo() }
        container.register(Foo.self, reuse: reuse, key: Flavor.chocolate) { Foo() }
        container.register(Foo.self, reuse: reuse) { Foo() }
        let scope = container.openScope("request")
        for resolving in [container as any Resolving, scope] {
            let typed = try resolving.require(Foo.self, key: "x")
            let erased = try resolving.require(Foo.self, key: AnyHashable("x"))
            let optional = try resolving.require(Foo.self, key: AnyHashable?.some("x"))
            if reuse == .transient {
                #expect(typed !== erased)
            } else {
                #expect(typed === erased && erased === optional)
                #expect(try resolving.require(Foo.self, key: 7) === resolving.require(Foo.self, key: AnyHashable(7)))
                #expect(try resolving.require(Foo.self, key: Flavor.chocolate) === resolving.require(Foo.self, key: AnyHashable(Flavor.chocolate)))
                #expect(try resolving.require(Foo.self, key: 7) !== resolving.require(Foo.self, key: "x"))
            }
            #expect(resolving.resolve(Foo.self, key: Flavor.vanilla) == nil)
        }
        #expect(counter.value == (reuse == .transient ? 6 : reuse == .singleton ? 1 : 2))
    }

    /// Keys of one type whose hashes are all equal: the lock-free path's first candidate is another key's
    /// bucket for all but one of them, and the probe must go on to the key's own.
    @Test("keys whose hashes collide each find their own registration")
    func collidingKeys() throws {
        struct Colliding: Hashable {
            let id: Int
            func hash(into hasher: inout Hasher) { hasher.combine(0) }
        }
        let container = Container()
        var registered: [Int: Foo] = [:]
        for id in 0..<6 {
            let instance = Foo()
            registered[id] = instance
            container.register(Foo.self, reuse: .singleton, key: Colliding(id: id)) { instance }
        }
        let scope = container.openScope("request")
        for round in 0..<2 {
            for id in (0..<6).reversed() {
                #expect(try scope.require(Foo.self, key: Colliding(id: id)) === registered[id], "key \(id), round \(round)")
                #expect(try scope.require(Foo.self, key: AnyHashable(Colliding(id: id))) === registered[id])
            }
        }
        #expect(scope.resolve(Foo.self, key: Colliding(id: 6)) == nil)
    }

    /// Dictionaries and sets hash a service key with its own mix (no `Hasher`): keys equal as `AnyHashable`
    /// (an `Int8` and an `Int`) must land together, and keys that differ only in the service, the arguments
    /// or the key must stay apart.
    @Test("service keys hash alike when equal and tell apart service, arguments and key")
    func serviceKeyHashing() {
        var keys = Set<ServiceKey>()
        for index in 0..<200 {
            keys.insert(ServiceKey(service: Foo.self, key: index))
            keys.insert(ServiceKey(service: Foo.self, arguments: Int.self, key: index))
            keys.insert(ServiceKey(service: Person.self, key: index))
        }
        keys.insert(ServiceKey(service: Foo.self))
        #expect(keys.count == 601)
        for index in 0..<200 {
            #expect(
                keys.contains(ServiceKey(service: Foo.self, key: Int8(truncatingIfNeeded: index)))
                    == (index < 128), "key \(index) as an Int8")
            #expect(keys.contains(ServiceKey(service: Person.self, key: AnyHashable(index))))
            #expect(!keys.contains(ServiceKey(service: Person.self, arguments: Int.self, key: index)))
        }
        #expect(keys.contains(ServiceKey(service: Foo.self, key: nil)))
        #expect(!keys.contains(ServiceKey(service: Person.self)))
    }

    /// A registration's `String` or `Int` key is boxed as its own type when registered, and the lookup table
    /// uses that box; a provided value's key, and a key of another type, get a box of the table's own.
    @Test("provided values and registrations with String, Int and enum keys resolve typed and as AnyHashable")
    func keyBoxesOfEveryOrigin() throws {
        enum Slot: Hashable { case primary, secondary }
        let container = Container()
        container.registerProvided(Person.self, key: "user")
        container.registerProvided(Person.self, key: 7)
        container.registerProvided(Person.self, key: Slot.primary)
        let registered = Foo()
        container.register(Foo.self, reuse: .singleton, key: Slot.secondary) { registered }
        let request = container.openScope("request")
        let (user, seven, primary) = (Person("a", "user"), Person("b", "seven"), Person("c", "primary"))
        request.provide(user, key: "user")
        request.provide(seven, key: 7)
        request.provide(primary, key: Slot.primary)
        let below = request.openScope("below")
        for _ in 0..<2 {
            #expect(try below.require(Person.self, key: "user") === user)
            #expect(try below.require(Person.self, key: AnyHashable("user")) === user)
            #expect(try below.require(Person.self, key: 7) === seven)
            #expect(try below.require(Person.self, key: AnyHashable(7)) === seven)
            #expect(try below.require(Person.self, key: Slot.primary) === primary)
            #expect(try below.require(Person.self, key: AnyHashable(Slot.primary)) === primary)
            #expect(try below.require(Foo.self, key: Slot.secondary) === registered)
            #expect(try below.require(Foo.self, key: AnyHashable(Slot.secondary)) === registered)
        }
        #expect(below.resolve(Person.self, key: "other") == nil)
        #expect(below.resolve(Person.self, key: Slot.secondary) == nil)
    }

    @Test("an Optional key means its value, and nil means the unkeyed registration")
    func optionalKeys() throws {
        let container = Container()
        let keyed = Foo()
        let unkeyed = Foo()
        container.register(Foo.self, reuse: .singleton, key: "x") { keyed }
        container.register(Foo.self, reuse: .singleton) { unkeyed }
        let name: String? = "x"
        let none: String? = nil
        let nested: String?? = .some("x")
        #expect(try container.require(Foo.self, key: name) === keyed)
        #expect(try container.require(Foo.self, key: none) === unkeyed)
        #expect(try container.require(Foo.self, key: nested) === keyed)
        #expect(container.resolve(Foo.self, key: nil) === unkeyed)
    }

    @Test("keys AnyHashable hashes its own way still resolve, by AnyHashable's equality")
    func customRepresentationKeys() throws {
        let container = Container()
        container.register(Foo.self, reuse: .singleton, key: 1.5) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: 3) { Foo() }
        let double = try container.require(Foo.self, key: 1.5)
        #expect(try container.require(Foo.self, key: AnyHashable(1.5)) === double)
        // AnyHashable finds integers equal across widths; so does the typed form.
        #expect(try container.require(Foo.self, key: Int8(3)) === container.require(Foo.self, key: 3))
        #expect(try container.require(Foo.self, key: UInt64(3)) === container.require(Foo.self, key: 3))
        // Held as AnyHashable: compared as the stored key's type when it is the same, by AnyHashable otherwise.
        for _ in 0..<2 {  // the second time on the lock-free path
            #expect(try container.require(Foo.self, key: AnyHashable(Int8(3))) === container.require(Foo.self, key: 3))
            #expect(try container.require(Foo.self, key: AnyHashable(3)) === container.require(Foo.self, key: 3))
            #expect(container.resolve(Foo.self, key: AnyHashable(4)) == nil)
            #expect(container.resolve(Foo.self, key: AnyHashable("3")) == nil)
        }
    }

    @Test("a key of another type is another key")
    func keyTypesDiffer() throws {
        let container = Container()
        container.register(Foo.self, key: "1") { Foo() }
        #expect(container.resolve(Foo.self, key: 1) == nil)
        let error = #expect(throws: ResolutionError.self) { try container.require(Foo.self, key: 1) }
        #expect(error?.code == .notRegistered)
        #expect(error?.description.contains(#"Foo[key: "1"]"#) == true)
    }

    @Test("typed keys with runtime arguments, labelled and not")
    func keysWithArguments() throws {
        let container = Container()
        container.register(Person.self, reuse: .singleton, key: Flavor.vanilla) { (first: String, last: String) in
            Person(first, last)
        }
        let first = try container.require(Person.self, ("Ada", "Lovelace"), key: Flavor.vanilla)
        #expect(first.first == "Ada")
        #expect(try container.require(Person.self, ("Alan", "Turing"), Flavor.vanilla) === first)
        #expect(container.resolve(Person.self, ("Alan", "Turing"), key: Flavor.vanilla) === first)
        #expect(container.resolve(Person.self, ("Alan", "Turing"), Flavor.vanilla) === first)
        #expect(container.resolve(Person.self, ("Alan", "Turing"), key: Flavor.chocolate) == nil)
    }

    @Test("a typed keyed singleton made under contention is made once and found lock-free by every thread")
    func typedKeysUnderContention() async throws {
        let container = Container()
        let counter = Counter()
        for key in 0..<64 {
            container.register(Foo.self, reuse: .singleton, key: "k\(key)") {
                counter.increment(); return Foo()
            }
        }
        let ids = await withTaskGroup(of: [ObjectIdentifier].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<2_000).compactMap { index in
                        container.resolve(Foo.self, key: "k\(index % 64)").map(ObjectIdentifier.init)
                    }
                }
            }
            return await group.reduce(into: [ObjectIdentifier]()) { $0 += $1 }
        }
        #expect(ids.count == 16_000)
        #expect(Set(ids).count == 64)
        #expect(counter.value == 64)
    }

    struct Route: Hashable, Sendable { let path: String }

    @Test("String, Int, UInt8 and other keys, typed or held as AnyHashable, are served lock-free once made")
    func keyedHitsAreLockFree() throws {
        let container = Container()
        let long = "com.example.payments.http-client"  // longer than a small string
        container.register(Foo.self, reuse: .singleton, key: "x") { Foo() }
        container.register(Foo.self, reuse: .singleton, key: long) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: 42) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: Route(path: "/users")) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: Flavor.chocolate) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: 1.5) { Foo() }
        container.register(Foo.self, reuse: .singleton, key: UInt8(7)) { Foo() }  // AnyHashable hashes it as a UInt64
        let keys: [AnyHashable] = ["x", long, 42, Route(path: "/users"), Flavor.chocolate, 1.5, UInt8(7)]
        let made = try keys.map { try container.require(Foo.self, key: $0) }
        // `compareArgsByValue` hashes the arguments under the container's lock: a key whose hash blocks holds it.
        let letGo = Signal()
        let hashing = Shared(false)
        let byKey = container.register(Person.self, { (_ key: BlockingKey) in Person("a", "b") }, reuse: .singleton)
        byKey.compareArgsByValue()
        let done = Shared(false)
        detach {
            _ = container.resolve(Person.self, BlockingKey(letGo: letGo, isHashing: hashing))
            done.value = true
        }
        while !hashing.value {}
        // Resolved on another thread, so that a resolve that takes the lock fails the test after a deadline
        // instead of hanging it.
        let served = Shared<[Bool]?>(nil)
        let erasedKeys = UncheckedBox(keys)  // immutable keys; AnyHashable is not Sendable
        detach {
            let keys = erasedKeys.value
            var results = zip(keys, made).map { key, instance in container.resolve(Foo.self, key: key) === instance }
            results.append(container.resolve(Foo.self, key: "x") === made[0])
            results.append(container.resolve(Foo.self, key: long) === made[1])
            results.append(container.resolve(Foo.self, key: 42) === made[2])
            results.append(container.resolve(Foo.self, key: Route(path: "/users")) === made[3])
            results.append(container.resolve(Foo.self, key: Flavor.chocolate) === made[4])
            results.append(container.resolve(Foo.self, key: 1.5) === made[5])
            results.append(container.resolve(Foo.self, key: UInt8(7)) === made[6])
            served.value = results
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while served.value == nil, ContinuousClock.now < deadline {}
        #expect(served.value == Array(repeating: true, count: 14), "every key served while the lock is held")
        letGo.fire()
        while !done.value || served.value == nil {}
    }

    @Test("equal strings with different bytes are one key (the lock-free hash differs, the locked path decides)")
    func canonicallyEquivalentStrings() throws {
        let container = Container()
        let composed = "caf\u{E9}"  // é as one scalar
        let decomposed = "cafe\u{301}"  // e and a combining accent
        #expect(composed == decomposed)
        container.register(Foo.self, reuse: .singleton, key: composed) { Foo() }
        let instance = try container.require(Foo.self, key: composed)
        for _ in 0..<2 {
            #expect(try container.require(Foo.self, key: decomposed) === instance)
            #expect(try container.require(Foo.self, key: AnyHashable(decomposed)) === instance)
            #expect(try container.openScope(1).require(Foo.self, key: decomposed) === instance)
        }
    }
}
