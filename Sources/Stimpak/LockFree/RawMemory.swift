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
    /// `count` uninitialized values of `type`; release with `release(_:)`.
    static func allocate<Value>(_ type: Value.Type, count: Int) -> UnsafeMutablePointer<Value> {
        assert(MemoryLayout<Value>.alignment <= 16, "malloc aligns to 16 bytes")
        return allocate(byteCount: MemoryLayout<Value>.stride * count).bindMemory(to: Value.self, capacity: count)
    }

    /// `byteCount` uninitialized bytes aligned to 16, for a header and the values after it; release with
    /// `release(_:)`.
    static func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        // Out of memory: the runtime's own allocations stop the process the same way.
        guard let raw = malloc(Swift.max(byteCount, 1)) else {
            preconditionFailure("Stimpak: out of memory allocating \(byteCount) bytes")
        }
        return raw
    }

    /// `byteCount` uninitialized bytes rounded up to whole cache lines (64 bytes) and aligned to one, for words
    /// that threads read on every resolve or write on every lock: no other allocation shares their lines, so
    /// what another thread writes next to them (a scope's fields, a table) does not take them from the readers'
    /// caches. Release with `release(_:)`.
    static func allocateLines(byteCount: Int) -> UnsafeMutableRawPointer {
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, cacheLine, (Swift.max(byteCount, 1) + cacheLine - 1) & ~(cacheLine - 1)) == 0,
            let raw
        else {
            preconditionFailure("Stimpak: out of memory allocating \(byteCount) bytes")
        }
        return raw
    }

    /// A cache line of x86-64 and most ARM cores. Apple's M-series cores have 128-byte lines, where two such
    /// allocations may still share one.
    static let cacheLine = 64

    /// Releases what ``allocate(_:count:)`` returned (its values deinitialized).
    static func release<Value>(_ pointer: UnsafeMutablePointer<Value>) {
        free(pointer)
    }

    /// Releases what ``allocate(byteCount:)`` returned (its values deinitialized).
    static func release(_ raw: UnsafeMutableRawPointer) {
        free(raw)
    }
}

/// Zeroed atomic words for registrations, handed out in runs from blocks of several: each registration
/// keeps its block alive (a retain, where a block of its own would cost a `malloc` and a `free`), and a block is
/// freed with the last registration made from it and the registry.
///
/// Only the registry's lock holder takes words (see ``Registry/takeWords(_:_:)``); a word itself is shared
/// as its ``AtomicWord`` says.
final class WordBlock: @unchecked Sendable {  // `used` is guarded by the registry's lock; the rest never changes
    /// The block's first word: the run of the registration the block was made for.
    let first: AtomicWord
    let capacity: Int
    private var used: Int

    /// A block of `capacity` words, all 0, whose first `count` are taken.
    init(capacity: Int, taking count: Int) {
        self.capacity = Swift.max(capacity, count)
        first = .allocate(count: self.capacity)
        used = count
    }

    deinit {
        first.deallocate()
    }

    /// The next `count` words (never handed out before, so still 0), or nil when fewer are left.
    func take(_ count: Int) -> AtomicWord? {
        guard count <= capacity - used else { return nil }
        defer { used += count }
        return first.advanced(by: used)
    }
}
