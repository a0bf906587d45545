import Foundation
import Stimpak
import StimpakFixtures
import Swinject

/// One line of the table: ns/op for each way, and the goal Stimpak is held to.
struct Row {
    var label: String
    var floor: Double?
    var swinject: Double?
    var stimpak: Double?
    var goal: String = "—"
    var outcome: String = ""
}

func runComparison(settings: Settings) async {
    let stimpak = makeStimpak()
    let swinject = makeSwinject()
    let largeStimpak = makeLargeStimpak()
    let largeSwinject = makeLargeSwinject()
    verify(stimpak, swinject, largeStimpak, largeSwinject)

    var rows: [Row] = []

    // 1. transient, no dependencies
    let r1 = measure(settings, [
        { n in for _ in 0..<n { sink(Foo1()) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo1.self)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo1.self)!) } },
    ])
    rows.append(goal(Row(label: "1. transient, no dependencies", floor: r1[0], swinject: r1[1], stimpak: r1[2]),
                     "≤ 2.0× floor", atMost: 2.0))

    // 2. singleton, already created; 2b. the same against a stored reference read
    let r2 = measure(settings, [
        { n in for _ in 0..<n { sink(Foo2()) } },
        { n in for _ in 0..<n { sink(storedFoo2) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo2.self)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo2.self)!) } },
    ])
    rows.append(goal(Row(label: "2. singleton, already created (floor `Foo()`)", floor: r2[0], swinject: r2[2], stimpak: r2[3]),
                     "≤ 1.5× `Foo()`", atMost: 1.5))
    rows.append(Row(label: "2b. singleton (floor: stored reference read)", floor: r2[1], swinject: r2[2], stimpak: r2[3]))

    // 3. transient with three transient dependencies, resolved through the scope the factory receives
    let r3 = measure(settings, [
        { n in for _ in 0..<n { sink(Root3(a: A3(), b: B3(), c: C3())) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Root3.self)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Root3.self)!) } },
    ])
    rows.append(goal(Row(label: "3. transient with 3 transient dependencies", floor: r3[0], swinject: r3[1], stimpak: r3[2]),
                     "≤ 2.0× floor", atMost: 2.0))

    // 4. two runtime arguments
    let r4 = measure(settings, [
        { n in for _ in 0..<n { sink(WithArgs4(s: "a", i: 1)) } },
        { n in for _ in 0..<n { sink(swinject.resolve(WithArgs4.self, arguments: "a", 1)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(WithArgs4.self, ("a", 1))!) } },
    ])
    rows.append(goal(Row(label: "4. two runtime arguments", floor: r4[0], swinject: r4[1], stimpak: r4[2]),
                     "≤ 2.0× floor", atMost: 2.0))

    // 4b-4d. providers bound to their registration when made (issue 32); Swinject's column is its resolve
    let makeFoo1 = stimpak.provider(Foo1.self)
    let makeFoo2 = stimpak.provider(Foo2.self)
    let makeWithArgs4 = stimpak.provider(WithArgs4.self, arguments: (String, Int).self)
    let r4b = measure(settings, [
        { n in for _ in 0..<n { sink(Foo1()) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo1.self)!) } },
        { n in for _ in 0..<n { sink(try! makeFoo1()) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo2.self)!) } },
        { n in for _ in 0..<n { sink(try! makeFoo2()) } },
        { n in for _ in 0..<n { sink(WithArgs4(s: "a", i: 1)) } },
        { n in for _ in 0..<n { sink(swinject.resolve(WithArgs4.self, arguments: "a", 1)!) } },
        { n in for _ in 0..<n { sink(try! makeWithArgs4(("a", 1))) } },
    ])
    rows.append(goal(Row(label: "4b. bound `Provider` call, transient (floor `Foo()`)", floor: r4b[0], swinject: r4b[1], stimpak: r4b[2]),
                     "≤ 1.15× `Foo()`", atMost: 1.15))
    rows.append(goal(Row(label: "4c. bound `Provider` call, cached singleton (floor `Foo()`)", floor: r4b[0], swinject: r4b[3], stimpak: r4b[4]),
                     "≤ 0.4× `Foo()`", atMost: 0.4))
    rows.append(goal(Row(label: "4d. bound `ArgumentProvider` call, two runtime arguments", floor: r4b[5], swinject: r4b[6], stimpak: r4b[7]),
                     "≤ 1.2× floor", atMost: 1.2))

    // 5. keyed (Swinject: name "x"), transient; 5b. keyed singleton
    let r5 = measure(settings, [
        { n in for _ in 0..<n { sink(Foo5()) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo5.self, name: "x")!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo5.self, key: "x")!) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo5S.self, name: "x")!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo5S.self, key: "x")!) } },
    ])
    rows.append(goal(Row(label: "5. keyed `key: \"x\"`, transient", floor: r5[0], swinject: r5[1], stimpak: r5[2]),
                     "≤ 3.0× `Foo()`", atMost: 3.0))
    rows.append(Row(label: "5b. keyed `key: \"x\"`, singleton (floor `Foo()`)", floor: r5[0], swinject: r5[3], stimpak: r5[4]))

    // 5c. keyed, the key held as `AnyHashable` (read from configuration, a route); Swinject's names are strings
    let anyKey = AnyHashable("x")
    let name = "x"
    let r5c = measure(settings, [
        { n in for _ in 0..<n { sink(Foo5()) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo5.self, name: name)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo5.self, key: anyKey)!) } },
    ])
    rows.append(Row(label: "5c. keyed, key held as `AnyHashable`, transient (floor `Foo()`)", floor: r5c[0], swinject: r5c[1], stimpak: r5c[2]))

    // 6. request cycle: open a scope, resolve an `.inScope` service twice, dispose the scope
    let r6 = measure(settings, [
        { n in
            for _ in 0..<n {
                let request = Request6()
                sink(request)
                sink(request)
            }
        },
        { n in for _ in 0..<n { swinjectRequestCycle(swinject) } },
        { n in for id in 0..<n { stimpakRequestCycle(stimpak, id: id) } },
    ])
    rows.append(goal(Row(label: "6. request cycle: open scope, 2 × `.inScope`, dispose", floor: r6[0], swinject: r6[1], stimpak: r6[2]),
                     "≤ 30× `Foo()`", atMost: 30))

    // 7. 1,000 registrations: transient resolve against scenario 1 (measured again alongside), cold start
    let r7 = measure(settings, [
        { n in for _ in 0..<n { sink(Foo7()) } },
        { n in for _ in 0..<n { sink(largeSwinject.resolve(Foo7.self)!) } },
        { n in for _ in 0..<n { sink(largeStimpak.resolve(Foo7.self)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo1.self)!) } },
    ])
    var row7 = Row(label: "7. transient, 1,000 registrations", floor: r7[0], swinject: r7[1], stimpak: r7[2])
    row7.goal = "within 10 % of #1"
    let change = (r7[2] / r7[3] - 1) * 100
    row7.outcome = String(format: "%+.1f %% vs %.1f ns %@", change, r7[3], abs(change) <= 10 ? "✅" : "❌")
    rows.append(row7)

    let coldSettings = Settings(
        repetitions: settings.repetitions, targetNanoseconds: settings.targetNanoseconds * 4,
        fixedIterations: settings.fixedIterations.map { max(1, $0 / 10) })
    let r7b = measure(coldSettings, [
        { n in
            for _ in 0..<n {
                let container = makeLargeSwinject()
                let request = Swinject.Container(parent: container)
                sink(request.resolve(Foo7.self)!)
            }
        },
        { n in
            for _ in 0..<n {
                let container = makeLargeStimpak()
                let request = container.openScope(1)
                sink(request.resolve(Foo7.self)!)
            }
        },
    ])
    rows.append(Row(label: "7b. cold start: register 1,000, open a scope, first resolve", floor: nil, swinject: r7b[0], stimpak: r7b[1]))
    let r7c = measure(coldSettings, [
        { n in for _ in 0..<n { sink(keyedColdStartSwinject()) } },
        { n in for _ in 0..<n { sink(keyedColdStartStimpak()) } },
    ])
    rows.append(Row(label: "7c. cold start, keyed: register 1,000 with a key, open a scope, first resolve, dispose", floor: nil, swinject: r7c[0], stimpak: r7c[1]))

    // 8. two threads resolving the same singleton at once, against one thread
    let swinjectResolver = UncheckedSendable(value: swinject.synchronize())
    let t8Floor = measureThreads(settings) { n in for _ in 0..<n { sink(storedFoo8) } }
    let t8Swinject = measureThreads(settings) { n in
        for _ in 0..<n { sink(swinjectResolver.value.resolve(Foo8.self)!) }
    }
    let t8Stimpak = measureThreads(settings) { n in for _ in 0..<n { sink(stimpak.resolve(Foo8.self)!) } }
    rows.append(Row(label: "8a. singleton, 1 thread (floor: stored reference read)",
                    floor: t8Floor.one, swinject: t8Swinject.one, stimpak: t8Stimpak.one))
    let scaling = t8Stimpak.one / t8Stimpak.two
    rows.append(scalingRow("8b. singleton, 2 threads at once (wall ns ÷ all ops)", t8Floor, t8Swinject, t8Stimpak,
                           goal: "≥ 1.6× one thread's throughput"))

    // 8c. the same with a value-type singleton: no reference count, so only the container can contend.
    let t8cFloor = measureThreads(settings) { n in for _ in 0..<n { sink(storedConfig8.port) } }
    let t8cSwinject = measureThreads(settings) { n in
        for _ in 0..<n { sink(swinjectResolver.value.resolve(Config8.self)!.port) }
    }
    let t8cStimpak = measureThreads(settings) { n in for _ in 0..<n { sink(stimpak.resolve(Config8.self)!.port) } }
    let valueScaling = t8cStimpak.one / t8cStimpak.two
    rows.append(scalingRow("8c. value-type singleton, 2 threads at once (wall ns ÷ all ops)", t8cFloor, t8cSwinject,
                           t8cStimpak, goal: "(the container's own scaling)"))

    // 9. the lifetimes of issue 10: a cached `.scopedTo` instance from a request scope below its session, a live
    // `.weak` instance, and a `provide`d value resolved 1 and 7 scopes below the scope that holds it. Swinject
    // has no `.scopedTo`; its `.weak` is the same lifetime; a child container with the value registered in
    // it, 7 containers above, stands for the provided value.
    let session9 = stimpak.openScope(Session9(id: 1))
    let request9 = session9.openScope(1)
    _ = await request9.resolve(Foo9S.self)
    _ = await request9.resolve(Foo9S.self)
    let heldWeak9 = await stimpak.resolve(Foo9W.self)!
    let heldSwinjectWeak9 = swinject.resolve(Foo9W.self)!
    let holder9 = stimpak.openScope("holder")
    holder9.provide(Request9())
    let near9 = holder9.openScope(1)
    var deep9 = near9
    for level in 2...7 { deep9 = deep9.openScope(level) }
    let swinjectHolder9 = Swinject.Container(parent: swinject)
    let request9Value = Request9()
    swinjectHolder9.register(Request9.self) { _ in request9Value }
    var swinjectDeep9 = swinjectHolder9
    for _ in 1...7 { swinjectDeep9 = Swinject.Container(parent: swinjectDeep9) }
    let r9 = measure(settings, [
        { n in for _ in 0..<n { sink(Foo1()) } },
        { n in for _ in 0..<n { sink(request9.resolve(Foo9S.self)!) } },
        { n in for _ in 0..<n { sink(swinject.resolve(Foo9W.self)!) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo9W.self)!) } },
        { n in for _ in 0..<n { sink(near9.resolve(Request9.self)!) } },
        { n in for _ in 0..<n { sink(swinjectDeep9.resolve(Request9.self)!) } },
        { n in for _ in 0..<n { sink(deep9.resolve(Request9.self)!) } },
    ])
    rows.append(goal(Row(label: "9a. `.scopedTo`, cached, from a request below its session (floor `Foo()`)", floor: r9[0], swinject: nil, stimpak: r9[1]),
                     "≤ 1.5× `Foo()`", atMost: 1.5))
    rows.append(goal(Row(label: "9b. `.weak`, alive (floor `Foo()`)", floor: r9[0], swinject: r9[2], stimpak: r9[3]),
                     "≤ 1.5× `Foo()`", atMost: 1.5))
    rows.append(Row(label: "9c. `provide`d value, 1 scope below (floor `Foo()`)", floor: r9[0], swinject: nil, stimpak: r9[4]))
    var row9d = Row(label: "9d. `provide`d value, 7 scopes below (floor `Foo()`)", floor: r9[0], swinject: r9[5], stimpak: r9[6])
    row9d.goal = "flat in depth (at most 10 % over 9c)"
    let growth = (r9[6] / r9[4] - 1) * 100
    row9d.outcome = String(format: "%+.0f %% vs 9c %@", growth, growth <= 10 ? "✅" : "❌")
    rows.append(row9d)
    withExtendedLifetime((heldWeak9, heldSwinjectWeak9)) {}

    // 10. async: `await` on a cached singleton made by an async factory, against the synchronous resolve of a
    // synchronous one; the first creation of a singleton wanted by 100 tasks at once, by an async factory
    // (the others suspend) and by a synchronous one (the others block their threads); a request cycle with
    // `withScope` and an async `.inScope` factory, against scenario 6. Swinject has no async resolve.
    _ = try? await stimpak.require(Foo10A.self)
    let r10 = await measureAsync(settings, [
        { n in for _ in 0..<n { sink(Foo1()) } },
        { n in for _ in 0..<n { sink(stimpak.resolve(Foo2.self)!) } },
        { n in for _ in 0..<n { sink(await stimpak.resolve(Foo10A.self)!) } },
        { n in for _ in 0..<n { await contendedCreation(tasks: 100, isAsync: true) } },
        { n in for _ in 0..<n { await contendedCreation(tasks: 100, isAsync: false) } },
        { n in for id in 0..<n { stimpakRequestCycle(stimpak, id: id) } },
        { n in
            for _ in 0..<n {
                await stimpak.withScope { request in
                    sink(await request.resolve(Request10.self)!)
                    sink(await request.resolve(Request10.self)!)
                }
            }
        },
    ])
    var row10a = Row(label: "10a. async-made singleton, cached, `await resolve` (floor `Foo()`)", floor: r10[0], swinject: nil, stimpak: r10[2])
    row10a.goal = "as the synchronous #2"
    row10a.outcome = String(format: "sync %.1f ns (%+.0f %%)", r10[1], (r10[2] / r10[1] - 1) * 100)
    rows.append(row10a)
    var row10b = Row(label: "10b. first creation wanted by 100 tasks, async factory (per creation)", floor: nil, swinject: nil, stimpak: r10[3])
    row10b.outcome = String(format: "sync factory %.0f ns", r10[4])
    rows.append(row10b)
    var row10c = Row(label: "10c. request cycle, `withScope` + 2 × async `.inScope` (floor `Foo()`)", floor: r10[0], swinject: nil, stimpak: r10[6])
    row10c.goal = "as the synchronous #6"
    row10c.outcome = String(format: "sync %.1f ns (%+.0f %%)", r10[5], (r10[6] / r10[5] - 1) * 100)
    rows.append(row10c)

    printTable(rows, settings: settings)
    print("")
    print(String(format: "Two threads' throughput ÷ one thread's, class singleton (8b vs 8a): hand-written %.2f×, Swinject %.2f×, Stimpak %.2f×.",
                 t8Floor.one / t8Floor.two, t8Swinject.one / t8Swinject.two, scaling))
    print(String(format: "The same, value-type singleton (8c): hand-written %.2f×, Swinject %.2f×, Stimpak %.2f×.",
                 t8cFloor.one / t8cFloor.two, t8cSwinject.one / t8cSwinject.two, valueScaling))
}

/// One first creation of a singleton that `tasks` tasks resolve at once: with an async factory the others
/// suspend until it is made; with a synchronous one they block their threads.
func contendedCreation(tasks: Int, isAsync: Bool) async {
    let container = Stimpak.Container()
    if isAsync {
        container.register(Foo10C.self, reuse: .singleton) { () async in Foo10C() }
    } else {
        container.register(Foo10C.self, reuse: .singleton) { Foo10C() }
    }
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
            group.addTask { sink(await container.resolve(Foo10C.self)!) }
        }
    }
}

/// The two-thread row of a scaling scenario, with Stimpak's two-thread throughput against its one-thread one.
func scalingRow(
    _ label: String, _ floor: (one: Double, two: Double), _ swinject: (one: Double, two: Double),
    _ stimpak: (one: Double, two: Double), goal: String
) -> Row {
    var row = Row(label: label, floor: floor.two, swinject: swinject.two, stimpak: stimpak.two)
    let scaling = stimpak.one / stimpak.two
    row.goal = goal
    row.outcome = String(format: "%.2f× %@", scaling, scaling >= 1.6 ? "✅" : "❌")
    return row
}

/// Fills in `row`'s goal and whether Stimpak's ratio to the floor meets it.
func goal(_ row: Row, _ text: String, atMost limit: Double) -> Row {
    var row = row
    row.goal = text
    if let floor = row.floor, let stimpak = row.stimpak {
        let ratio = stimpak / floor
        row.outcome = String(format: "%.2f× %@", ratio, ratio <= limit ? "✅" : "❌")
    }
    return row
}

func printTable(_ rows: [Row], settings: Settings) {
    func ns(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value >= 10_000 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }
    func ratio(_ value: Double?, _ floor: Double?) -> String {
        guard let value, let floor else { return "—" }
        return String(format: "%.2f×", value / floor)
    }
    let mode = settings.fixedIterations == nil ? "" : " (--quick: tiny iteration counts, numbers meaningless)"
    print("ns/op, median of \(settings.repetitions) repetitions\(mode)")
    print("")
    print("| scenario | hand-written | Swinject | Stimpak | Swinject ÷ floor | Stimpak ÷ floor | Stimpak goal | Stimpak vs goal |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for row in rows {
        print("| \(row.label) | \(ns(row.floor)) | \(ns(row.swinject)) | \(ns(row.stimpak)) | \(ratio(row.swinject, row.floor)) | \(ratio(row.stimpak, row.floor)) | \(row.goal) | \(row.outcome) |")
    }
}

/// Checks, once and outside the timing, that each way does what the scenario says.
func verify(_ stimpak: Stimpak.Container, _ swinject: Swinject.Container,
            _ largeStimpak: Stimpak.Container, _ largeSwinject: Swinject.Container) {
    precondition(stimpak.resolve(Foo1.self)! !== stimpak.resolve(Foo1.self)!, "transient")
    precondition(stimpak.resolve(Foo2.self)! === stimpak.resolve(Foo2.self)!, "singleton")
    precondition(stimpak.provider(Foo1.self).isBound && stimpak.provider(Foo2.self).isBound, "bound providers")
    precondition(try! stimpak.provider(Foo2.self)() === stimpak.resolve(Foo2.self)!, "bound singleton provider")
    precondition(stimpak.provider(WithArgs4.self, arguments: (String, Int).self).isBound, "bound argument provider")
    precondition(swinject.resolve(Foo1.self)! !== swinject.resolve(Foo1.self)!, "Swinject transient")
    precondition(swinject.resolve(Foo2.self)! === swinject.resolve(Foo2.self)!, "Swinject singleton")
    let root = stimpak.resolve(Root3.self)!, swinjectRoot = swinject.resolve(Root3.self)!
    precondition(root.a !== stimpak.resolve(Root3.self)!.a && swinjectRoot.a !== swinject.resolve(Root3.self)!.a)
    let args = stimpak.resolve(WithArgs4.self, ("a", 1))!, swinjectArgs = swinject.resolve(WithArgs4.self, arguments: "a", 1)!
    precondition(args.s == "a" && args.i == 1 && swinjectArgs.s == "a" && swinjectArgs.i == 1, "arguments")
    precondition(stimpak.resolve(Foo5.self) == nil && stimpak.resolve(Foo5.self, key: "x") != nil, "keyed")
    precondition(swinject.resolve(Foo5.self) == nil && swinject.resolve(Foo5.self, name: "x") != nil, "Swinject named")
    precondition(stimpak.resolve(Foo5S.self, key: "x")! === stimpak.resolve(Foo5S.self, key: "x")!, "keyed singleton")
    precondition(stimpak.resolve(Config8.self)?.port == 8080 && swinject.resolve(Config8.self)?.port == 8080, "value singleton")

    let scope1 = stimpak.openScope("one"), scope2 = stimpak.openScope("two")
    precondition(scope1.resolve(Request6.self)! === scope1.resolve(Request6.self)!, "inScope: same in a scope")
    precondition(scope1.resolve(Request6.self)! !== scope2.resolve(Request6.self)!, "inScope: one per scope")
    scope1.dispose()
    scope2.dispose()
    let request1 = swinjectRequest(parent: swinject), request2 = swinjectRequest(parent: swinject)
    precondition(request1.resolve(Request6.self)! === request1.resolve(Request6.self)!, "Swinject request: same")
    precondition(request1.resolve(Request6.self)! !== request2.resolve(Request6.self)!, "Swinject request: one per request")

    precondition(largeStimpak.registrations.count == 1_001, "1,000 fillers + Foo7")
    precondition(largeStimpak.resolve(Foo7.self) != nil && largeSwinject.resolve(Foo7.self) != nil)
    precondition(largeStimpak.resolve(Filler999.self) != nil && largeSwinject.resolve(Filler999.self) != nil)
}
