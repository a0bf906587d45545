import Foundation
import Stimpak
import StimpakConfiguration
import StimpakTestSupport
import Testing

/// The container owns the registrations that definitions make: they work after the `Definitions` value is
/// gone, free what they hold when the container goes, and turn an instance of the wrong type into an error.
@Suite struct DefinitionsLifetimeTests {
    protocol Greeter: Sendable {
        var greeting: String { get }
    }

    struct EnglishGreeter: Greeter {
        let greeting = "hello"
    }

    struct OtherGreeter: Greeter {
        let greeting = "salut"
    }

    /// An object an extension holds, to see when the extension is freed.
    final class Marker: Sendable {}

    static let greeterTypes = ServiceTypes().type("App.Greeter", EnglishGreeter.self) { _ in EnglishGreeter() }

    @Test("a service registered from a file, a provider's service and an extension resolve after the Definitions value is gone")
    func registrationsOutliveTheDefinitionsValue() throws {
        let container = Container()
        weak var released: Definitions?
        do {
            let definitions = Definitions(container: container, types: readmeTypes)
            try definitions.load(Data(doseReadmePlist.utf8), name: "README.plist")
            definitions.register("report", as: String.self) { context in
                "report by " + (try context.get("dose.service1", as: Service1.self)).name
            }
            definitions.extend("report", as: String.self) { text, context in
                text + " (" + (try context.parameter("lambdakey", as: String.self)) + ")"
            }
            released = definitions
        }
        #expect(released == nil, "nothing else holds the definitions")
        let service2 = try container.require(ReadmeService2.self, key: "dose.service2")
        #expect(service2.service1.name == "A VALUE")
        #expect(try container.require(String.self, key: "report") == "report by A VALUE (A VALUE)")
    }

    @Test("releasing the container frees the definitions and what their registrations hold: no cycle between them")
    func releasingTheContainerFreesTheDefinitions() throws {
        weak var container: Container?
        weak var definitions: Definitions?
        weak var marker: Marker?
        do {
            let made = Definitions(types: readmeTypes)
            try made.load(Data(doseReadmePlist.utf8), name: "README.plist")
            let held = Marker()
            made.extend("dose.service1", as: Service1.self) { service, _ in
                _ = held
                return service
            }
            _ = try made.get("dose.service2", as: ReadmeService2.self)
            container = made.container
            definitions = made
            marker = held
        }
        #expect(definitions == nil)
        #expect(container == nil)
        // Released registrations wait for lock-free resolves of other tests under way: reclaimed first.
        Container.reclaim()
        #expect(marker == nil, "the extension, held by the registrations, is freed with the container")
    }

    @Test("an extension that returns another type than the file's service's is an error naming both types")
    func extensionOfTheWrongTypeOfAFileService() throws {
        let definitions = Definitions(types: Self.greeterTypes, environment: [:])
        try definitions.load(Data(#"{ "services": { "greeter": { "class": "App.Greeter" } } }"#.utf8), name: "app.json")
        definitions.extend("greeter", as: (any Greeter).self) { _, _ in OtherGreeter() }
        let error = try #require(throws: ConfigurationError.self) { try definitions.get("greeter") }
        #expect(error.code == .wrongInstanceType)
        #expect(error.path == "services.greeter")
        #expect(error.description.contains("greeter is registered as EnglishGreeter, but an extension of it returned a OtherGreeter"))
        let wrapped = try #require(throws: ResolutionError.self) {
            try definitions.container.require(EnglishGreeter.self, key: "greeter")
        }
        #expect(wrapped.code == .factoryFailed)
        #expect((wrapped.underlyingError as? ConfigurationError)?.code == .wrongInstanceType)
    }

    @Test("an extension that returns another type than a provider's service's is an error naming both types")
    func extensionOfTheWrongTypeOfAProviderService() throws {
        let definitions = Definitions(types: ServiceTypes(), environment: [:])
        definitions.register("greeter", as: EnglishGreeter.self) { _ in EnglishGreeter() }
        definitions.extend("greeter", as: (any Greeter).self) { _, _ in OtherGreeter() }
        let error = try #require(throws: ConfigurationError.self) { try definitions.get("greeter") }
        #expect(error.code == .wrongInstanceType)
        #expect(error.description.contains("greeter is registered as EnglishGreeter, but an extension of it returned a OtherGreeter"))
    }
}
