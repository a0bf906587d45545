import Testing
import Stimpak

/// `.graph`: one instance per outermost resolve, shared by everything resolved during it.
@Suite struct GraphTests {
    final class UnitOfWork: Sendable {}
    final class Repository: Sendable {
        let work: UnitOfWork
        init(_ work: UnitOfWork) { self.work = work }
    }
    final class OrderService: Sendable {
        let work: UnitOfWork
        let repository: Repository
        init(_ work: UnitOfWork, _ repository: Repository) {
            self.work = work
            self.repository = repository
        }
    }

    static func makeContainer() -> Container {
        let container = Container()
        container.register(UnitOfWork.self, reuse: .graph) { UnitOfWork() }
        container.register(Repository.self) { (scope: Scope) in Repository(try scope.require(UnitOfWork.self)) }
        container.register(OrderService.self) { (scope: Scope) in
            OrderService(try scope.require(UnitOfWork.self), try scope.require(Repository.self))
        }
        return container
    }

    @Test func dependenciesResolvedDuringOneResolveShareTheInstance() throws {
        let container = Self.makeContainer()
        let first = try container.require(OrderService.self)
        #expect(first.work === first.repository.work)
        let second = try container.openScope(1).require(OrderService.self)
        #expect(second.work === second.repository.work)
        #expect(second.work !== first.work, "the next outermost resolve makes a new graph")
    }

    @Test func resolvedOutermostItIsNewEachTime() throws {
        let container = Self.makeContainer()
        #expect(try container.require(UnitOfWork.self) !== container.require(UnitOfWork.self))
        #expect(Reuse.graph.description == ".graph")
    }

    @Test func resolvedCallbackClosesACycleThroughTheGraphInstance() throws {
        final class Parent: @unchecked Sendable {  // `child` is set once, by the callback, before it is shared
            var child: Child?
        }
        final class Child: Sendable {
            weak let parent: Parent?
            init(_ parent: Parent) { self.parent = parent }
        }
        let container = Container()
        container.register(Parent.self, reuse: .graph) { Parent() }
            .resolved { scope, parent in parent.child = try scope.require(Child.self) }
        container.register(Child.self) { (scope: Scope) in Child(try scope.require(Parent.self)) }
        let parent = try container.require(Parent.self)
        #expect(parent.child?.parent === parent)
        #expect(try container.require(Parent.self) !== parent)
    }

    @Test(arguments: [Reuse.graph, .singleton, .inScope, .transient])
    func theResolvedCallbackSharesTheGraphOfItsResolve(reuse: Reuse) throws {
        final class Audited: @unchecked Sendable {
            let work: UnitOfWork
            var audit: UnitOfWork?
            init(_ work: UnitOfWork) { self.work = work }
        }
        let container = Container()
        container.register(UnitOfWork.self, reuse: .graph) { UnitOfWork() }
        container.register(Audited.self, reuse: reuse) { (scope: Scope) in Audited(try scope.require(UnitOfWork.self)) }
            .resolved { scope, audited in audited.audit = try scope.require(UnitOfWork.self) }
        // The callback is part of the outermost resolve: it gets the graph's instance, not a new one.
        let audited = try container.require(Audited.self)
        #expect(audited.audit === audited.work)
        #expect(try container.require(UnitOfWork.self) !== audited.work, "the next resolve is a new graph")
    }

    @Test func failedCallbackLeavesNoInstanceBehind() throws {
        let container = Container()
        let fails = Shared(true)
        let failed = Shared<Person?>(nil)
        container.register(Person.self, reuse: .graph) { Person("work", "") }
            .resolved { _, person in
                if fails.value {
                    failed.value = person
                    throw Boom()
                }
            }
        container.register(Repository.self) { (scope: Scope) -> Repository in
            // The first attempt fails; the factory recovers by resolving again, within the same graph.
            #expect(throws: ResolutionError.self) { try scope.require(Person.self) }
            fails.value = false
            let person = try scope.require(Person.self)
            #expect(person !== failed.value, "the instance whose callback failed is not handed out")
            #expect(try scope.require(Person.self) === person, "the second one is kept for the graph")
            return Repository(UnitOfWork())
        }
        _ = try container.require(Repository.self)
    }

    @Test func eachThreadHasItsOwnGraph() {
        let container = Self.makeContainer()
        let results = ResultBox(count: ConcurrencyTests.threads)
        hammer(threads: ConcurrencyTests.threads) { index in
            for _ in 0..<200 {
                guard let service = container.resolve(OrderService.self) else { return }
                if service.work !== service.repository.work { return }
            }
            results.set(index, container.resolve(OrderService.self).map { $0.work === $0.repository.work })
        }
        #expect(results.values == Array(repeating: "true", count: ConcurrencyTests.threads))
    }
}
