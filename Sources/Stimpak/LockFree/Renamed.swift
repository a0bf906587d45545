/// `value` as `To`, which is its own type `From` under another name: a generic function that compared the two
/// types (`Key.self == Int.self`) or knows them equal (`Value` is `Wrapped?`) reads its value as the concrete
/// type without a dynamic cast, which unspecialized code would pay for on every call. Undefined behaviour when
/// the types differ: call it only where they are known equal.
@inlinable @inline(__always)
func renamed<From, To>(_ value: From, as type: To.Type) -> To {
    unsafeBitCast(value, to: To.self)
}
