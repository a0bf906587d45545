import Foundation
import Stimpak

// The contention section: how long the container's writers (a scope's `dispose()`, `unregister`, `register`
// with `.replace`) take while other threads resolve, timed call by call with the monotonic clock. A writer
// must not free what a lock-free reader may still be reading, so what it costs depends on the readers: the
// figures are percentiles and maxima, where a preempted reader shows, not means.
//
//   swift run -c release StimpakComparison --contention           # this section alone (about 15 s)
//   swift run -c release StimpakComparison --contention --quick   # 0.2 s a row (a few seconds)
//   swift run -c release StimpakComparison --quick                # CI: the quick tables, this one included
//
// Every row runs in rounds, each scenario once a round in turn, and pools its rounds: drift on a busy
// machine hits the rows alike, as in the other tables. No instruction counts: callgrind runs one thread at
// a time, so what it would count is its own scheduling, not a reader preempted in its read section.

/// How long each row runs: `rounds` times `seconds`.
struct ContentionSettings: Equatable {
    var rounds: Int
    var seconds: Double

    static let full = ContentionSettings(rounds: 3, seconds: 0.5)
    static let quick = ContentionSettings(rounds: 1, seconds: 0.2)
}

/// The "little work" of a server request (12): opaque calls, so that the optimizer keeps them.
let serverWorkSteps = 2_000

/// A reader's batch: this many resolves of each of its two cached services between two looks at its stop flag.
let readerBatch = 16

/// The container of 11–13: a fresh one for every run of a scenario.
func makeContentionContainer() -> Stimpak.Container {
    let container = Stimpak.Container()
    container.register(Pool11.self, reuse: .singleton) { Pool11() }
    container.register(Session11.self, reuse: .inScope) { (scope: Scope) in Session11(pool: try scope.require(Pool11.self)) }
    container.register(Cached11.self, reuse: .singleton) { Cached11() }
    container.register(LongLived11.self, reuse: .inScope) { LongLived11() }
    container.register(Dep12a.self, reuse: .singleton) { Dep12a() }
    container.register(Dep12b.self, reuse: .singleton) { Dep12b() }
    container.register(Dep12c.self, reuse: .singleton) { Dep12c() }
    container.register(Dep12d.self, reuse: .singleton) { Dep12d() }
    container.register(Dep12e.self, reuse: .singleton) { Dep12e() }
    container.register(Dep12f.self, reuse: .singleton) { Dep12f() }
    container.register(Dep12g.self, reuse: .singleton) { Dep12g() }
    container.register(Dep12h.self, reuse: .singleton) { Dep12h() }
    container.register(Dep12i.self, reuse: .singleton) { Dep12i() }
    container.register(Dep12j.self, reuse: .singleton) { Dep12j() }
    return container
}

/// One scenario: its measured threads' loop over a fresh container, and the readers beside them.
struct ContentionScenario {
    enum Kind {
        /// 11: one thread runs request cycles, timing each `dispose()`.
        case disposeUnderReaders
        /// 12: every measured thread serves requests, timing each `dispose()`.
        case serverMix
        /// 13: one thread registers (`.replace`) twice and unregisters, timing each call.
        case writer
    }

    let kind: Kind
    let readers: Int
    let workers: Int

    var calls: Int { kind == .writer ? 2 : 1 }

    func loop(_ container: Stimpak.Container) -> MeasuredLoop {
        switch kind {
        case .disposeUnderReaders: return { worker, record, deadline in disposeLoop(container, worker: worker, &record, until: deadline) }
        case .serverMix: return { worker, record, deadline in serverLoop(container, worker: worker, &record, until: deadline) }
        case .writer: return { _, record, deadline in writerLoop(container, &record, until: deadline) }
        }
    }
}

// MARK: - The measured loops

/// A request cycle: open a scope, resolve its `.inScope` session (which takes the `.singleton` pool), dispose.
private func disposeLoop(_ container: Stimpak.Container, worker: Int, _ record: inout LatencyRecord, until deadline: UInt64) {
    var id = worker << 40
    var now = monotonicNanoseconds()
    while now < deadline {
        let request = container.openScope(id)
        sink(request.resolve(Session11.self)!)
        let start = monotonicNanoseconds()
        request.dispose()
        now = monotonicNanoseconds()
        record.calls[0].record(now - start)
        id += 1
    }
}

/// A server's request: open a scope, resolve its session and ten cached singletons, work a little, dispose.
private func serverLoop(_ container: Stimpak.Container, worker: Int, _ record: inout LatencyRecord, until deadline: UInt64) {
    var id = worker << 40  // the threads' scope keys never meet: an open key would be shared
    var now = monotonicNanoseconds()
    while now < deadline {
        let request = container.openScope(id)
        sink(request.resolve(Session11.self)!)
        sink(request.resolve(Dep12a.self)!)
        sink(request.resolve(Dep12b.self)!)
        sink(request.resolve(Dep12c.self)!)
        sink(request.resolve(Dep12d.self)!)
        sink(request.resolve(Dep12e.self)!)
        sink(request.resolve(Dep12f.self)!)
        sink(request.resolve(Dep12g.self)!)
        sink(request.resolve(Dep12h.self)!)
        sink(request.resolve(Dep12i.self)!)
        sink(request.resolve(Dep12j.self)!)
        for step in 0..<serverWorkSteps { sink(step) }
        let start = monotonicNanoseconds()
        request.dispose()
        now = monotonicNanoseconds()
        record.calls[0].record(now - start)
        id += 1
    }
}

/// A service nobody resolves, registered with `.replace` (once added, once replacing) and unregistered.
private func writerLoop(_ container: Stimpak.Container, _ record: inout LatencyRecord, until deadline: UInt64) {
    var now = monotonicNanoseconds()
    while now < deadline {
        for _ in 0..<2 {
            let start = now
            container.register(Unrelated13.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Unrelated13() }
            now = monotonicNanoseconds()
            record.calls[0].record(now - start)
        }
        let start = now
        container.unregister(Unrelated13.self)
        now = monotonicNanoseconds()
        record.calls[1].record(now - start)
    }
}

// MARK: - Running and reporting

/// A scenario's results, pooled over its rounds.
struct ContentionResult {
    var record: LatencyRecord
    var reads = 0

    /// Wall-clock seconds the measured threads ran (each ran about as long).
    func seconds(workers: Int) -> Double {
        Double(record.nanoseconds) / Double(workers) / 1e9
    }
}

/// Runs one scenario once, on a fresh container whose cached services the readers resolve.
@available(macOS 15.0, iOS 18.0, *)
func runRound(_ scenario: ContentionScenario, seconds: Double) -> ContentionResult {
    let container = makeContentionContainer()
    let longLived = container.openScope("long-lived")
    _ = container.resolve(Cached11.self)
    _ = longLived.resolve(LongLived11.self)
    let read: @Sendable () -> Void = {
        for _ in 0..<readerBatch {
            sink(container.resolve(Cached11.self)!)
            sink(longLived.resolve(LongLived11.self)!)
        }
    }
    let (record, reads) = runContended(
        readers: scenario.readers, readsPerCall: 2 * readerBatch, workers: scenario.workers, calls: scenario.calls, seconds: seconds,
        read: read, loop: scenario.loop(container))
    longLived.dispose()
    return ContentionResult(record: record, reads: reads)
}

/// One line of the contention table: one timed call of one scenario.
private struct LatencyRow {
    var label: String
    var histogram: LatencyHistogram
    var callsPerSecond: Double
    /// The share of the measured threads' time spent inside the call.
    var shareInCall: Double
    var readsPerSecond: Double?
    /// The same call's p99 with no readers, measured in the same run.
    var baselineP99: UInt64?
    var goal = "—"
    var outcome = ""
}

/// Runs the contention scenarios (11–13) interleaved over `settings.rounds` rounds and prints their table.
@available(macOS 15.0, iOS 18.0, *)
func runContention(settings: ContentionSettings) {
    verifyContention()
    let readerCounts = [0, 1, 2, 8]
    let serverThreads = [4, 8, 16]
    let writerReaders = [0, 8]
    let scenarios =
        readerCounts.map { ContentionScenario(kind: .disposeUnderReaders, readers: $0, workers: 1) }
        + serverThreads.map { ContentionScenario(kind: .serverMix, readers: 0, workers: $0) }
        + writerReaders.map { ContentionScenario(kind: .writer, readers: $0, workers: 1) }
    var results = scenarios.map { ContentionResult(record: LatencyRecord(calls: $0.calls)) }
    for _ in 0..<settings.rounds {
        for (index, scenario) in scenarios.enumerated() {
            let result = runRound(scenario, seconds: settings.seconds)
            results[index].record.merge(result.record)
            results[index].reads += result.reads
        }
    }

    func row(_ label: String, _ index: Int, call: Int = 0, baseline: Int? = nil) -> LatencyRow {
        let scenario = scenarios[index], result = results[index]
        let seconds = result.seconds(workers: scenario.workers)
        let histogram = result.record.calls[call]
        return LatencyRow(
            label: label, histogram: histogram, callsPerSecond: Double(histogram.count) / seconds,
            shareInCall: Double(histogram.total) / Double(max(result.record.nanoseconds, 1)),
            readsPerSecond: scenario.readers > 0 ? Double(result.reads) / seconds : nil,
            baselineP99: baseline.map { results[$0].record.calls[call].percentile(0.99) })
    }
    var rows: [LatencyRow] = []
    for (offset, readers) in readerCounts.enumerated() {
        let letter = ["a", "b", "c", "d"][offset]
        let label = "11\(letter). `dispose()` of a request scope, \(readers) reader thread\(readers == 1 ? "" : "s")"
        rows.append(row(label, offset, baseline: readers == 0 ? nil : 0))
    }
    var eightReaders = rows[readerCounts.firstIndex(of: 8)!]
    eightReaders.goal = "p99 ≤ 20 µs, ≥ 200 k cycles/s"
    let p99 = eightReaders.histogram.percentile(0.99)
    eightReaders.outcome = "\(microseconds(p99)) µs \(p99 <= 20_000 ? "✅" : "❌"), \(rate(eightReaders.callsPerSecond))/s \(eightReaders.callsPerSecond >= 200_000 ? "✅" : "❌")"
    rows[readerCounts.firstIndex(of: 8)!] = eightReaders
    for (offset, threads) in serverThreads.enumerated() {
        let letter = ["a", "b", "c"][offset]
        var server = row("12\(letter). server mix, \(threads) threads: `dispose()`", readerCounts.count + offset)
        if threads == 16 {
            server.goal = "p99.9 ≤ 20 µs, ≤ 5 % of the time in `dispose()`"
            let p999 = server.histogram.percentile(0.999)
            server.outcome = "\(microseconds(p999)) µs \(p999 <= 20_000 ? "✅" : "❌"), \(String(format: "%.1f %%", server.shareInCall * 100)) \(server.shareInCall <= 0.05 ? "✅" : "❌")"
        }
        rows.append(server)
    }
    let writer = readerCounts.count + serverThreads.count
    for (call, name) in ["`register(.replace)`", "`unregister`"].enumerated() {
        for (offset, readers) in writerReaders.enumerated() {
            let letter = ["a", "b", "c", "d"][call * 2 + offset]
            rows.append(row("13\(letter). \(name) of an unrelated service, \(readers) reader threads", writer + offset,
                            call: call, baseline: readers == 0 ? nil : writer))
        }
    }
    printContentionTable(rows, settings: settings)
}

private func microseconds(_ nanoseconds: UInt64) -> String {
    let value = Double(nanoseconds) / 1_000
    return value >= 1_000 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

private func rate(_ perSecond: Double) -> String {
    if perSecond >= 10_000_000 { return String(format: "%.1f M", perSecond / 1_000_000) }
    return perSecond >= 10_000 ? String(format: "%.0f k", perSecond / 1_000) : String(format: "%.0f", perSecond)
}

private func printContentionTable(_ rows: [LatencyRow], settings: ContentionSettings) {
    let mode = settings == .quick ? " (--quick: short runs, tails unreliable)" : ""
    print("Contention: each call timed with CLOCK_MONOTONIC (about 20 ns of clock included), µs; \(settings.rounds) "
          + "round\(settings.rounds == 1 ? "" : "s") of \(settings.seconds) s per row, rows interleaved; "
          + "\(ProcessInfo.processInfo.activeProcessorCount) cores\(mode)")
    print("Readers resolve a cached singleton and a cached `.inScope` instance of a long-lived scope nonstop; a server "
          + "request resolves its `.inScope` session and 10 cached singletons, then makes \(serverWorkSteps) opaque calls "
          + String(format: "(%.1f µs on one thread), then disposes.", serverWorkMicroseconds()))
    print("")
    print("| scenario | calls timed | calls/s | p50 | p99 | p99.9 | max | time in call | reader resolves/s | p99 ÷ 0 readers | goal | vs goal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for row in rows {
        let histogram = row.histogram
        let ratio = row.baselineP99.map { baseline in
            let value = Double(histogram.percentile(0.99)) / Double(max(baseline, 1))
            return String(format: value >= 100 ? "%.0f×" : "%.1f×", value)
        } ?? "—"
        let columns = [
            row.label, "\(histogram.count)", rate(row.callsPerSecond), microseconds(histogram.percentile(0.5)),
            microseconds(histogram.percentile(0.99)), microseconds(histogram.percentile(0.999)), microseconds(histogram.max),
            String(format: "%.1f %%", row.shareInCall * 100), row.readsPerSecond.map(rate) ?? "—", ratio, row.goal, row.outcome,
        ]
        print("| " + columns.joined(separator: " | ") + " |")
    }
}

/// The server request's work alone, on this thread: µs per request, the fastest of 5 runs (the others met a
/// busy machine).
private func serverWorkMicroseconds() -> Double {
    let requests = 200
    let fastest = (0..<5).map { _ in
        let start = monotonicNanoseconds()
        for _ in 0..<requests {
            for step in 0..<serverWorkSteps { sink(step) }
        }
        return monotonicNanoseconds() - start
    }.min()!
    return Double(fastest) / Double(requests) / 1_000
}

/// Checks, once and outside the timing, that the contention container does what the scenarios say.
private func verifyContention() {
    let container = makeContentionContainer()
    let request1 = container.openScope(1), request2 = container.openScope(2)
    let session = request1.resolve(Session11.self)!
    precondition(session === request1.resolve(Session11.self)! && session !== request2.resolve(Session11.self)!, "inScope session")
    precondition(session.pool === request2.resolve(Session11.self)!.pool, "the session's pool is a singleton")
    request1.dispose()
    request2.dispose()
    precondition(request1.isDisposed && container.openScopeCount == 0, "disposed")
    precondition(container.resolve(Dep12j.self)! === container.openScope(3).resolve(Dep12j.self)!, "cached singletons")
    container.register(Unrelated13.self, reuse: .singleton, ifAlreadyRegistered: .replace) { Unrelated13() }
    precondition(container.isRegistered(Unrelated13.self) && container.unregister(Unrelated13.self), "writer")
    precondition(!container.isRegistered(Unrelated13.self), "unregistered")
}
