import CBenchmarkSink
import Foundation

// MARK: - The sink: every result escapes here, so the optimizer can't delete the work that made it.

/// Hands `value` to an opaque C function without retaining it: the leanest honest floor, since `let foo =
/// Foo()` used and dropped pays nothing more (a sink that stores into a global adds a retain, a release and
/// a call to every column, and pulls every ratio toward 1). `_fixLifetime` keeps `value` alive across the
/// call at no cost; `withExtendedLifetime` was not inlined here and added about 50 instructions to every column.
@inline(__always)
func sink(_ value: AnyObject) {
    stimpak_benchmark_sink(Unmanaged.passUnretained(value).toOpaque())
    _fixLifetime(value)
}

@inline(__always)
func sink(_ number: Int) {
    stimpak_benchmark_sink_int(number)
}

// MARK: - Timing

struct Settings {
    /// Repetitions per measurement; the median is reported.
    var repetitions: Int
    /// Wall time one repetition aims at, in nanoseconds (iterations are calibrated to it).
    var targetNanoseconds: Double
    /// Fixed iteration count instead of calibration (quick mode).
    var fixedIterations: Int?

    static let full = Settings(repetitions: 7, targetNanoseconds: 40_000_000, fixedIterations: nil)
    static let quick = Settings(repetitions: 3, targetNanoseconds: 0, fixedIterations: 20)
}

@inline(__always)
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Nanoseconds that `body(iterations)` takes.
@inline(__always)
func time(_ iterations: Int, _ body: (Int) -> Void) -> Double {
    let start = now()
    body(iterations)
    return Double(now() - start)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The iteration count that makes one repetition of `body` take about `settings.targetNanoseconds`.
func calibrate(_ settings: Settings, _ body: (Int) -> Void) -> Int {
    if let fixed = settings.fixedIterations { return fixed }
    var iterations = 1
    while true {
        let elapsed = time(iterations, body)
        if elapsed >= 2_000_000 || iterations >= 1 << 30 {
            return max(1, Int(Double(iterations) * settings.targetNanoseconds / max(elapsed, 1)))
        }
        iterations *= 10
    }
}

/// Median ns/op of each body. Each body loops `n` times itself (no call per operation); the bodies
/// run interleaved, one repetition of each in turn, so that drift on a busy machine hits them alike.
func measure(_ settings: Settings, _ bodies: [(Int) -> Void]) -> [Double] {
    let counts = bodies.map { calibrate(settings, $0) }
    for (body, count) in zip(bodies, counts) { body(count) }  // warm-up
    var samples = [[Double]](repeating: [], count: bodies.count)
    for _ in 0..<settings.repetitions {
        for index in bodies.indices {
            samples[index].append(time(counts[index], bodies[index]) / Double(counts[index]))
        }
    }
    return samples.map(median)
}

/// Nanoseconds that the asynchronous `body(iterations)` takes.
func time(_ iterations: Int, _ body: (Int) async -> Void) async -> Double {
    let start = now()
    await body(iterations)
    return Double(now() - start)
}

/// ``measure(_:_:)`` for asynchronous bodies: the same calibration, interleaving and median.
func measureAsync(_ settings: Settings, _ bodies: [(Int) async -> Void]) async -> [Double] {
    var counts: [Int] = []
    for body in bodies {
        if let fixed = settings.fixedIterations {
            counts.append(fixed)
            continue
        }
        var iterations = 1
        while true {
            let elapsed = await time(iterations, body)
            if elapsed >= 2_000_000 || iterations >= 1 << 30 {
                counts.append(max(1, Int(Double(iterations) * settings.targetNanoseconds / max(elapsed, 1))))
                break
            }
            iterations *= 10
        }
    }
    for (body, count) in zip(bodies, counts) { await body(count) }  // warm-up
    var samples = [[Double]](repeating: [], count: bodies.count)
    for _ in 0..<settings.repetitions {
        for index in bodies.indices {
            samples[index].append(await time(counts[index], bodies[index]) / Double(counts[index]))
        }
    }
    return samples.map(median)
}

// MARK: - Threads

/// Runs `body(iterations)` on `threads` new threads released at once; returns the wall time from
/// the release until the last finished, in nanoseconds.
func runOnThreads(_ threads: Int, iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<threads {
        let thread = Thread {
            ready.signal()
            go.wait()
            body(iterations)
            done.signal()
        }
        thread.start()
    }
    for _ in 0..<threads { ready.wait() }
    let start = now()
    for _ in 0..<threads { go.signal() }
    for _ in 0..<threads { done.wait() }
    return Double(now() - start)
}

/// Aggregate ns/op (wall time ÷ all threads' operations), median of the repetitions, for 1 and 2 threads.
func measureThreads(_ settings: Settings, _ body: @escaping @Sendable (Int) -> Void) -> (one: Double, two: Double) {
    let iterations = calibrate(settings, body)
    _ = runOnThreads(2, iterations: iterations, body)  // warm-up
    var one: [Double] = []
    var two: [Double] = []
    for _ in 0..<settings.repetitions {
        one.append(runOnThreads(1, iterations: iterations, body) / Double(iterations))
        two.append(runOnThreads(2, iterations: iterations, body) / Double(2 * iterations))
    }
    return (median(one), median(two))
}

/// Lets a non-`Sendable` value (Swinject's synchronized resolver, which is thread-safe) cross into threads.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}
