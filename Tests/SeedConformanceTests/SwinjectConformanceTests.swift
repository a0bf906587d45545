import Stimpak
import Testing

// Swinject's README ("Basic Usage") and documentation (object scopes, names, arguments, assemblies, child
// containers, circular dependencies), ported through the Swinject migration guide (MigratingFromSwinject.md):
// each test names the rows it exercises.

protocol Animal: Sendable {
    var name: String? { get }
}

final class Cat: Animal {
    let name: String?
    init(name: String?) { self.name = name }
}

protocol Person: Sendable {
    func play() -> String
}

final class PetOwner: Person {
    let pet: any Animal
    init(pet: any Animal) { self.pet = pet }
    func play() -> String { "I'm playing with \(pet.name ?? "someone")." }
}

@Suite struct SwinjectConformanceTests {
    /// "Basic Usage". Row: `container.register(A.self) { r in A(b: r.resolve(B.self)!) }`.
    @Test func basicUsage() throws {
        let container = Container()
        container.register((any Animal).self) { Cat(name: "Mimi") }
        container.register((any Person).self) { (scope: Scope) in PetOwner(pet: try scope.require((any Animal).self)) }
        let person = try #require(container.resolve((any Person).self))
        #expect(person.play() == "I'm playing with Mimi.")
    }

    /// The same with autowiring. Row: `autowire(A.self, A.init)`.
    @Test func basicUsageAutowired() throws {
        let container = Container()
        container.register((any Animal).self) { Cat(name: "Mimi") }
        container.autowire((any Person).self, PetOwner.init)
        #expect(try container.require((any Person).self).play() == "I'm playing with Mimi.")
    }

    /// Object scopes. Rows: `.inObjectScope(.container)`, `.weak` / `.transient` / `.graph`, and the note on
    /// Swinject's default scope, `.graph`.
    @Test func objectScopes() throws {
        let container = Container(defaultReuse: .graph)  // Swinject's default
        container.register(Cat.self, reuse: .singleton) { Cat(name: "container") }
        #expect(try container.require(Cat.self) === container.require(Cat.self))

        final class Toy: Sendable {}
        final class Box: Sendable {
            let first: Toy
            let second: Toy
            init(first: Toy, second: Toy) { (self.first, self.second) = (first, second) }
        }
        container.register(Toy.self) { Toy() }  // the default: .graph
        container.register(Box.self, reuse: .transient) { scope in Box(first: try scope.require(), second: try scope.require()) }
        let box = try container.require(Box.self)
        #expect(box.first === box.second, ".graph: one per resolution graph")
        #expect(try container.require(Box.self).first !== box.first, ".transient: a new graph each time")

        final class Session: Sendable {}
        let made = Made()
        container.register(Session.self, reuse: .weak) { () -> Session in
            made.increment()
            return Session()
        }
        var held: Session? = try container.require(Session.self)
        #expect(try container.require(Session.self) === held)
        #expect(made.value == 1)
        held = nil
        Container.reclaim()
        _ = try container.require(Session.self)
        #expect(made.value == 2, ".weak: made again once released")
        _ = held
    }

    /// Names and arguments. Rows: `resolve(A.self, name: "x")`, `resolve(A.self, arguments: a, b)`.
    @Test func namesAndArguments() throws {
        let container = Container()
        container.register((any Animal).self, key: "cat") { Cat(name: "Mimi") }
        container.register((any Animal).self, key: "named") { (name: String, suffix: String) in Cat(name: name + suffix) }
        #expect(try container.require((any Animal).self, key: "cat").name == "Mimi")
        #expect(try container.require((any Animal).self, ("Tama", "!"), key: "named").name == "Tama!")
        #expect(container.resolve((any Animal).self, key: "dog") == nil)
        container.register((any Animal).self) { (name: String, suffix: String) in Cat(name: name + suffix) }
        #expect(container.resolve((any Animal).self, ("Mimi", "?"))?.name == "Mimi?")
    }

    /// Assemblies. Row: `Assembly`, `Assembler` → `Module`, `install`.
    @Test func assemblies() throws {
        struct AnimalAssembly: Module {
            func register(in container: Container) { container.register((any Animal).self) { Cat(name: "Mimi") } }
        }
        struct PersonAssembly: Module {
            func register(in container: Container) {
                container.register((any Person).self) { (scope: Scope) in PetOwner(pet: try scope.require((any Animal).self)) }
            }
        }
        let container = Container()
        container.install(AnimalAssembly(), PersonAssembly())
        #expect(try container.require((any Person).self).play() == "I'm playing with Mimi.")
    }

    /// Child containers: a child sees its parent's registrations and may override them. Row: child
    /// `Container(parent:)` → `openScope`, `scope.register`.
    @Test func childContainers() throws {
        let container = Container()
        container.register((any Animal).self) { Cat(name: "Mimi") }
        container.register((any Person).self) { (scope: Scope) in PetOwner(pet: try scope.require((any Animal).self)) }
        let child = container.openScope("test")
        child.register((any Animal).self) { Cat(name: "Stub") }
        #expect(try child.require((any Person).self).play() == "I'm playing with Stub.")
        #expect(try container.require((any Person).self).play() == "I'm playing with Mimi.", "the parent is unchanged")
    }

    /// `Lazy` and `Provider`. Row: `Lazy<A>`, `Provider<A>`.
    @Test func lazyAndProvider() throws {
        let container = Container()
        container.register((any Animal).self) { Cat(name: "Mimi") }
        let lazy = try container.require(Lazy<any Animal>.self)
        let provider = try container.require(Provider<any Animal>.self)
        #expect(try lazy.value.name == "Mimi")
        #expect(try provider().name == "Mimi")
    }
}

/// Swinject's `Documentation/CircularDependencies.md`: `Parent` takes its child in its initializer, `Child`
/// gets its weak parent in a callback after creation. Row: `initCompleted { r, a in … }` → `.resolved`.
@Suite struct SwinjectCircularDependencyTests {
    protocol ParentProtocol: AnyObject, Sendable {}
    protocol ChildProtocol: AnyObject, Sendable {}

    final class Parent: ParentProtocol {
        let child: (any ChildProtocol)?
        init(child: (any ChildProtocol)?) { self.child = child }
    }

    final class Child: ChildProtocol, @unchecked Sendable {  // `parent` is set once, by the callback
        weak var parent: (any ParentProtocol)?
    }

    /// Initializer/property: the container of the document, with reused instances (Swinject's default
    /// `.graph` is one resolve's; a singleton is the container's).
    static func initializerProperty(reuse: Reuse) -> Container {
        let container = Container()
        container.register((any ParentProtocol).self, reuse: reuse) { (scope: Scope) in
            Parent(child: try scope.require((any ChildProtocol).self)) as any ParentProtocol
        }
        container.register((any ChildProtocol).self, reuse: reuse) { Child() as any ChildProtocol }
            .resolved { scope, child in
                (child as? Child)?.parent = try scope.require((any ParentProtocol).self)
            }
        return container
    }

    @Test(arguments: [Reuse.singleton, Reuse.graph])
    func parentFirst(reuse: Reuse) throws {
        let container = Self.initializerProperty(reuse: reuse)
        let parent = try container.require((any ParentProtocol).self) as? Parent
        let child = try #require(parent?.child as? Child)
        #expect(child.parent === parent, "the callback ran once the parent existed, and got that parent")
    }

    @Test func childFirst() throws {
        let container = Self.initializerProperty(reuse: .singleton)
        let child = try #require(try container.require((any ChildProtocol).self) as? Child)
        let parent = try #require(child.parent as? Parent)
        #expect(parent.child === child)
    }

    /// The document's container resolved from async code, with `await`, and with an `async` factory for `Parent`
    /// (Swinject has neither): either side first.
    @Test(arguments: [false, true])
    func awaitedFromEitherSide(asyncParent: Bool) async throws {
        for parentFirst in [true, false] {
            let container = Self.initializerProperty(reuse: .singleton)
            if asyncParent {
                container.register((any ParentProtocol).self, reuse: .singleton, ifAlreadyRegistered: .replace) {
                    (scope: Scope) async throws in Parent(child: try await scope.require((any ChildProtocol).self)) as any ParentProtocol
                }
            }
            let parent: Parent?
            if parentFirst {
                parent = try await container.require((any ParentProtocol).self) as? Parent
            } else {
                let child = try await container.require((any ChildProtocol).self) as? Child
                parent = child?.parent as? Parent
            }
            let child = try #require(parent?.child as? Child)
            #expect(child.parent === parent, "parent first: \(parentFirst)")
        }
    }

    /// Property/property: both sides through properties, the child's set in its callback.
    @Test func propertyProperty() throws {
        final class PropertyParent: ParentProtocol, @unchecked Sendable {  // `child` is set once, by the factory
            var child: (any ChildProtocol)?
        }
        let container = Container()
        container.register((any ParentProtocol).self, reuse: .singleton) { (scope: Scope) -> any ParentProtocol in
            let parent = PropertyParent()
            parent.child = try scope.require((any ChildProtocol).self)
            return parent
        }
        container.register((any ChildProtocol).self, reuse: .singleton) { Child() as any ChildProtocol }
            .resolved { scope, child in (child as? Child)?.parent = try scope.require((any ParentProtocol).self) }
        let parent = try #require(try container.require((any ParentProtocol).self) as? PropertyParent)
        #expect((parent.child as? Child)?.parent === parent)
    }

    /// A deferred callback that fails again fails the outermost resolve, with its error; the instances stay made.
    @Test func aDeferredCallbackThatFailsAgainFailsTheOutermostResolve() throws {
        struct Boom: Error {}
        let container = Container()
        container.register((any ParentProtocol).self, reuse: .singleton) { (scope: Scope) in
            Parent(child: try scope.require((any ChildProtocol).self)) as any ParentProtocol
        }
        let runs = Made()
        container.register((any ChildProtocol).self, reuse: .singleton) { Child() as any ChildProtocol }
            .resolved { scope, child in
                runs.increment()
                (child as? Child)?.parent = try scope.require((any ParentProtocol).self)
                throw Boom()
            }
        let error = try #require(throws: ResolutionError.self) { try container.require((any ParentProtocol).self) }
        #expect(error.code == .factoryFailed)
        #expect(error.underlyingError is Boom)
        #expect(runs.value == 2, "once during the parent's creation (a cycle), once after it")
        let parent = try container.require((any ParentProtocol).self) as? Parent
        #expect((parent?.child as? Child)?.parent === parent)
    }

    /// Initializer/initializer: not supported anywhere; a true cycle of factories stays an error, and its
    /// message's fix is the callback above.
    @Test func initializerInitializerIsACycle() throws {
        final class Left: Sendable { init(_ right: Right) {} }
        final class Right: Sendable { init(_ left: Left) {} }
        let container = Container()
        container.register(Left.self, reuse: .singleton) { (scope: Scope) in Left(try scope.require(Right.self)) }
        container.register(Right.self, reuse: .singleton) { (scope: Scope) in Right(try scope.require(Left.self)) }
        let error = try #require(throws: ResolutionError.self) { try container.require(Left.self) }
        #expect(error.code == .dependencyCycle)
        #expect(error.description.contains("resolved"))
    }
}
