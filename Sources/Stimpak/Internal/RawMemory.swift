#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Memory from `malloc`, for the container's raw buffers (atomic words, lookup tables, scope tables).
///
/// `UnsafeMutablePointer.allocate` asks the runtime for memory of the type's alignment or more, which on
/// Linux it takes from `posix_memalign`: about 90 instructions more per allocation and release than
/// `malloc`, whose 16-byte alignment every type stored here needs no more than.
enum RawMemory {
    /// `count` uninitialized values of `type`; release with ``release(_:)``.
    static func allocate<Value>(_ type: Value.Type, count: Int) -> UnsafeMutablePointer<Value> {
        assert(MemoryLayout<Value>.alignment <= 16, "malloc aligns to 16 bytes")
        // Out of memory: the runtime's own allocations stop the process the same way.
        guard let raw = malloc(MemoryLayout<Value>.stride * Swift.max(count, 1)) else {
            preconditionFailure("Stimpak: out of memory allocating \(count) × \(Value.self)")
        }
        return raw.bindMemory(to: Value.self, capacity: count)
    }

    /// Releases what ``allocate(_:count:)`` returned (its values deinitialized).
    static func release<Value>(_ pointer: UnsafeMutablePointer<Value>) {
        free(pointer)
    }
}
