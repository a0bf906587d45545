// A target built with `.defaultIsolation(MainActor.self)`, as new app projects are since Swift 6.2: every
// type and function here is main-actor isolated unless it says otherwise. It registers and resolves its own
// types with the README's snippets ("Actors"), so building the package proves they compile there.
import Stimpak

final class SettingsModel {
    var title = "Settings"
    init() {}
}

final class CartStore {
    private(set) var items: [String] = []
    init() {}
    func add(_ item: String) { items.append(item) }
}

final class CartModel {
    let store: CartStore
    @Injected var settings: SettingsModel
    init(store: CartStore) { self.store = store }
}

/// What the fixture's code resolved, for the tests to check.
public struct FixtureReport: Sendable, Equatable {
    public let settingsTitle: String
    public let sharedStore: Bool
    public let sameModelInScope: Bool
    public let injectedSettings: Bool
}

public enum MainActorFixture {
    /// The README's registrations.
    public static func makeContainer() -> Container {
        let container = Container()
        container.register(SettingsModel.self, reuse: .inScope, onMainActor: { SettingsModel() })
        container.register(CartStore.self, reuse: .singleton, onMainActor: { CartStore() })
        container.register(
            CartModel.self, reuse: .inScope,
            onMainActor: { (scope: Scope) in
                try scope.withCurrent { CartModel(store: try scope.require(CartStore.self)) }
            })
        return container
    }

    /// Resolves synchronously, as main-actor code (a view, a view model) does.
    public static func resolveOnTheMainActor(_ container: Container) throws -> FixtureReport {
        let screen = container.openScope()
        defer { screen.dispose() }
        let model = try screen.require(CartModel.self)
        model.store.add("book")
        let settings = try screen.require(SettingsModel.self)
        let other = container.openScope()
        defer { other.dispose() }
        return FixtureReport(
            settingsTitle: settings.title,
            sharedStore: try other.require(CartModel.self).store === model.store,
            sameModelInScope: try screen.require(CartModel.self) === model,
            injectedSettings: model.settings === settings)
    }

    /// Resolves from a task off the main actor: `try await` hops to it.
    @concurrent
    public static func resolveFromElsewhere(_ container: Container) async throws -> String {
        let screen = container.openScope()
        let title = try await screen.require(SettingsModel.self).title
        await screen.dispose()
        return title
    }
}
