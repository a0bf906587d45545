/// How a cache keeps a reused instance, and publishes it for the lock-free path: a class instance as itself
/// (one strong reference: nothing to allocate), anything else (a value, an existential) in an
/// ``InstanceBox``, so that it is one word whatever `Service` is.
///
/// The published word says which: its low bit (``boxBit``, free in an object's address) is set for a box.
/// The writer decides, from the object it caches (`is AnyInstanceBox`), and the reader follows the bit, so
/// the two cannot disagree about a type, whatever the optimizer folds where.
@usableFromInline
enum CachedInstance {
    /// The bit of a published word that marks an ``InstanceBox``.
    @usableFromInline static let boxBit: UInt = 1

    /// Whether an instance of `Service` is cached as itself: `Service` is a class, so its value is one strong
    /// reference. (A class-bound protocol's existential carries witness tables: boxed.)
    @inlinable
    static func isItself<Service>(_ type: Service.Type) -> Bool {
        Service.self is AnyClass && MemoryLayout<Service>.size == MemoryLayout<AnyObject>.size
    }

    /// What caches `value` (a `provide`d one): itself or a new box. A registration decides once, with
    /// ``ServiceRegistration/cached(_:)``.
    @inlinable
    static func object<Service>(for value: Service) -> AnyObject {
        isItself(Service.self) ? unsafeBitCast(value, to: AnyObject.self) : InstanceBox(value)
    }

    /// The word that publishes `object`, a cached instance: its address, with ``boxBit`` for a box.
    static func publishedBits(of object: AnyObject) -> UInt {
        publishedBits(of: object, isBox: object is AnyInstanceBox)
    }

    /// The same, when the publisher knows whether `object` is a box (no cast asks the runtime).
    static func publishedBits(of object: AnyObject, isBox: Bool) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()) | (isBox ? boxBit : 0)
    }
}

/// What every ``InstanceBox`` is, whatever its `Service`: so that publishing tells a box from an instance.
@usableFromInline
class AnyInstanceBox {
    @usableFromInline init() {}
}

/// A cached value or existential (see ``CachedInstance``), boxed so that the lock-free path can publish it as
/// one word.
@usableFromInline
final class InstanceBox<Service>: AnyInstanceBox {
    @usableFromInline let value: Service

    /// Required, so that a registration can make boxes through the metatype it stored (see
    /// ``ServiceRegistration/boxType``) instead of looking the generic metadata up on every creation.
    @usableFromInline
    required init(_ value: Service) {
        self.value = value
    }
}

/// A `.weak` instance: the cache holds it weakly, so it lives only while someone else holds it. Immutable:
/// published for the lock-free path like a cached instance, and replaced (retired, then released after the
/// readers) when its instance is gone.
final class WeakBox {
    weak let object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}
