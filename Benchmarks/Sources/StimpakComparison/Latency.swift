import Foundation
import Synchronization

// The latency harness of the contention section (Contention.swift): a monotonic clock read around each
// measured call, a histogram that records it without allocating, and threads that run against a deadline.

// MARK: - Clock

/// `CLOCK_MONOTONIC` in nanoseconds: one vDSO call (about 20 ns, included in every measured call's time).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    let result = clock_gettime(CLOCK_MONOTONIC, &time)
    precondition(result == 0, "clock_gettime(CLOCK_MONOTONIC) failed: \(errno)")
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

// MARK: - Histogram

/// Durations in nanoseconds, counted in buckets 1/64 of a power of two wide (HdrHistogram's layout: within
/// 1.6 %), with the exact maximum and sum. Its memory is allocated once, so recording allocates nothing
/// while the measured thread runs.
struct LatencyHistogram {
    private static let subBucketBits = 6
    private static let subBuckets = 1 << subBucketBits
    private var counts = [Int](repeating: 0, count: (64 - subBucketBits + 1) << subBucketBits)
    private(set) var count = 0
    private(set) var total: UInt64 = 0
    private(set) var max: UInt64 = 0

    /// Values below 64 have a bucket each; above, each octave has 64.
    private static func index(of value: UInt64) -> Int {
        guard value >= UInt64(subBuckets) else { return Int(value) }
        let shift = (63 - value.leadingZeroBitCount) - subBucketBits
        return ((shift + 1) << subBucketBits) + Int((value >> UInt64(shift)) & UInt64(subBuckets - 1))
    }

    /// The largest value bucket `index` counts.
    private static func upperBound(of index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let shift = UInt64((index >> subBucketBits) - 1)
        let lower = UInt64(subBuckets + index & (subBuckets - 1)) << shift
        return lower + (1 << shift) - 1
    }

    @inline(__always)
    mutating func record(_ nanoseconds: UInt64) {
        counts[Self.index(of: nanoseconds)] += 1
        count += 1
        total &+= nanoseconds
        if nanoseconds > max { max = nanoseconds }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        count += other.count
        total &+= other.total
        max = Swift.max(max, other.max)
    }

    /// The smallest recorded value that at least `fraction` of the values do not exceed (its bucket's upper
    /// bound, never above the maximum); 0 when nothing was recorded.
    func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank { return Swift.min(Self.upperBound(of: index), max) }
        }
        return max
    }
}

// MARK: - Threads

/// What the measured threads of one run recorded: a histogram per timed call, and the nanoseconds they ran for
/// (summed over the threads).
struct LatencyRecord {
    var calls: [LatencyHistogram]
    var nanoseconds: UInt64 = 0

    init(calls: Int) {
        self.calls = [LatencyHistogram](repeating: LatencyHistogram(), count: calls)
    }

    mutating func merge(_ other: LatencyRecord) {
        for index in calls.indices { calls[index].merge(other.calls[index]) }
        nanoseconds += other.nanoseconds
    }
}

/// A measured thread's loop: the thread `worker` (0, 1, …) runs until the monotonic clock passes `deadline`,
/// recording into `record`.
typealias MeasuredLoop = @Sendable (_ worker: Int, _ record: inout LatencyRecord, _ deadline: UInt64) -> Void

/// What the threads of one run share: the readers' stop flag, and the totals each thread adds when it ends.
@available(macOS 15.0, iOS 18.0, *)
private final class RunState: Sendable {
    let isStopped = Atomic<Bool>(false)
    let reads = Mutex(0)
    let record: Mutex<LatencyRecord>

    init(calls: Int) {
        record = Mutex(LatencyRecord(calls: calls))
    }
}

/// Runs `workers` measured threads for `seconds` while `readers` threads call `read` nonstop (each call a batch
/// of `readsPerCall` resolves), all started before the measured threads are released.
/// - Returns: The measured threads' merged record, and the resolves the readers made meanwhile.
@available(macOS 15.0, iOS 18.0, *)
func runContended(
    readers: Int, readsPerCall: Int, workers: Int, calls: Int, seconds: Double,
    read: @escaping @Sendable () -> Void, loop: @escaping MeasuredLoop
) -> (record: LatencyRecord, reads: Int) {
    let state = RunState(calls: calls)
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<readers {
        Thread {
            read()  // the thread's first resolve registers it with the readers a disposal waits for: before the release
            ready.signal()
            var count = 1
            while !state.isStopped.load(ordering: .relaxed) {
                read()
                count += 1
            }
            state.reads.withLock { $0 += count * readsPerCall }
            done.signal()
        }.start()
    }
    let nanoseconds = UInt64(seconds * 1e9)
    for worker in 0..<workers {
        Thread {
            var record = LatencyRecord(calls: calls)
            ready.signal()
            go.wait()
            let start = monotonicNanoseconds()
            loop(worker, &record, start + nanoseconds)
            record.nanoseconds = monotonicNanoseconds() - start
            state.record.withLock { $0.merge(record) }
            done.signal()
        }.start()
    }
    for _ in 0..<(readers + workers) { ready.wait() }
    for _ in 0..<workers { go.signal() }
    for _ in 0..<workers { done.wait() }
    state.isStopped.store(true, ordering: .relaxed)
    for _ in 0..<readers { done.wait() }
    return (state.record.withLock { $0 }, state.reads.withLock { $0 })
}
