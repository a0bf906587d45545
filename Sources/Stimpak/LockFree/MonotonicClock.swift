#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `CLOCK_MONOTONIC`, the clock that the waits' deadlines (``InFlight``, whose condition variable waits on it)
/// and the observer's durations are read from.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary start; never goes back.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
