import Testing
import Stimpak

/// The app's real container, shared by every test of the suite, as an app's test target would share it.
enum App {
    final class Checkout: @unchecked Sendable {
        @Injected var greeter: any Greeter
        let viaFactory: any Greeter
        init(viaFactory: any Greeter) { self.viaFactory = viaFactory }
    }

    static let container: Container = {
        let container = Container()
        container.register((any Greeter).self, reuse: .singleton) { FixedGreeter(greeting: "production") }
        container.register(Checkout.self, reuse: .inScope) { (scope: Scope) in
            try scope.withCurrent { Checkout(viaFactory: try scope.require((any Greeter).self)) }
        }
        return container
    }()
}

/// Eight tests run in parallel (Swift Testing's default), each replacing the same service of the shared app
/// container in its own scope: none sees another's override, and the app's registration is untouched.
@Suite struct ParallelOverrideTests {
    @Test(arguments: 0..<8)
    func eachTestOverridesTheSameServiceDifferently(index: Int) async throws {
        try await App.container.withScope("test \(index)") { test in
            test.register((any Greeter).self, reuse: .singleton) { FixedGreeter(greeting: "fake \(index)") }
            try await test.withCurrent {
                for round in 0..<20 {
                    let checkout = try await test.require(App.Checkout.self)
                    #expect(checkout.viaFactory.greeting == "fake \(index)", "round \(round)")
                    #expect(checkout.greeter.greeting == "fake \(index)", "injected, round \(round)")
                    #expect(try await inject((any Greeter).self).greeting == "fake \(index)")
                    // Let the other tests run in between, on this thread or another.
                    try await Task.sleep(nanoseconds: 1_000_000)
                    #expect(App.Checkout(viaFactory: FixedGreeter(greeting: "")).greeter.greeting == "fake \(index)")
                }
            }
        }
        #expect(try await App.container.require((any Greeter).self).greeting == "production")
    }
}
