/// How a registration keeps its instances for the lock-free path, and what it learns from their types'
/// metadata: the casts here rename one-word values whose type was checked first.
extension ServiceRegistration {
    /// `InstanceBox<Service>`, looked up on the first creation and remembered: the locked path runs
    /// unspecialized, and naming the generic type there would look its metadata up on every creation (and
    /// doing it at registration would cost every registration that is never made).
    var boxType: InstanceBox<Service>.Type {
        let cached = boxTypeWord.loadRelaxed()
        // A metatype is one word: the cast only renames it. Two threads may both store it: the same value.
        if cached != 0 { return unsafeBitCast(cached, to: InstanceBox<Service>.Type.self) }
        let type = InstanceBox<Service>.self
        boxTypeWord.storeRelaxed(unsafeBitCast(type, to: UInt.self))
        return type
    }
    /// What a cache keeps for `instance` (see ``CachedInstance``): the instance itself for a class `Service`,
    /// else a box.
    func cached(_ instance: Service) -> AnyObject {
        // A class `Service`'s value is one object reference: the cast only renames it.
        isClassService ? unsafeBitCast(instance, to: AnyObject.self) : boxType.init(instance)
    }

    /// Whether ``cached(_:)`` boxes an instance (an ``InstanceBox``), rather than keeping it as it is.
    var cachesInBox: Bool { !isClassService }

    /// The instance in what ``cached(_:)`` made.
    func instance(in cached: AnyObject) -> Service {
        isClassService ? unsafeBitCast(cached, to: Service.self) : unsafeDowncast(cached, to: InstanceBox<Service>.self).value
    }

    /// `instance`'s dynamic type: read from the object for a class `Service` (a subclass's instance has
    /// its own), and otherwise through `Any`, since in generic code `type(of:)` of an existential `Service`
    /// is the existential type (boxing it costs about 150 instructions more).
    func dynamicType(of instance: Service) -> any Any.Type {
        guard isClassService else { return Swift.type(of: instance as Any) }
        // `Service` is a class type: the value is one object reference, and the cast only renames it.
        return Swift.type(of: unsafeBitCast(instance, to: AnyObject.self))
    }

    /// Whether `type` is a struct, an enum, an optional or a tuple: its metadata's kind says so (the kinds of
    /// the Swift ABI's type metadata: 0x200, 0x201, 0x202, 0x301); a class, a protocol or a metatype is not.
    static func isValueType(_ type: Any.Type) -> Bool {
        let kind = unsafeBitCast(type, to: UnsafePointer<UInt>.self).pointee
        return kind == 0x200 || kind == 0x201 || kind == 0x202 || kind == 0x301
    }
}
