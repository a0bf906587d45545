import Foundation
import Stimpak
import StimpakConfiguration
import StimpakTestSupport
import Testing

/// Dose's definitions on Stimpak: the README's and the tests' files, providers, extend, JSON, merging,
/// the environment, and every kind of bad input.
@Suite struct DefinitionsTests {
    @Test("Dose's README plist, verbatim, loads and resolves; nothing is made before it is asked for")
    func readmePlist() throws {
        let definitions = Definitions(types: readmeTypes)
        try definitions.load(Data(doseReadmePlist.utf8), name: "README.plist")
        #expect(definitions.names == ["debug_output", "dose.service1", "dose.service2", "lambdakey"])
        #expect(definitions.container.root.report().instances.isEmpty, "lazy")
        let service2 = try definitions.get("dose.service2", as: ReadmeService2.self)
        #expect(service2.name == "Second Service")
        #expect(service2.service1.name == "A VALUE")
        #expect(service2.service1.subname == "An argument")
        #expect(try definitions.get("dose.service1", as: Service1.self) === service2.service1, "shared")
        #expect(try definitions.get("debug_output", as: Bool.self) == true)
        #expect(
            try definitions.container.require(ReadmeService2.self, key: "dose.service2") === service2,
            "a registration of the container, by type and key")
    }

    /// Reads a parameter of its definitions when it is released.
    final class ReadsParameter: @unchecked Sendable {
        weak var definitions: Definitions?
        init(_ definitions: Definitions) { self.definitions = definitions }
        deinit { _ = try? definitions?.get("debug_output", as: Bool.self) }
    }

    @Test("a file that replaces a service defined in code releases it with no lock held: its deinit may read")
    func loadReleasesTheReplacedOutsideLocks() throws {
        let definitions = Definitions(types: readmeTypes)
        try definitions.load(Data(doseReadmePlist.utf8), name: "README.plist")
        func define(holding held: ReadsParameter) {
            definitions.register("dose.service1", as: Service1.self) { context in
                withExtendedLifetime(held) {}
                return try context.get("dose.service1", as: Service1.self)
            }
        }
        define(holding: ReadsParameter(definitions))
        let returned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? definitions.load(Data(doseReadmePlist.utf8), name: "again.plist")
            Container.reclaim()
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + 10) == .success, "no deadlock")
    }

    func doseKernel() throws -> Definitions {
        let definitions = Definitions(types: doseTypes)
        try definitions.load(Data(doseTestsPlist.utf8), name: "services.plist")
        try definitions.install(SimpleLoggerProvider(), parameters: ["debug_output": true])
        try definitions.install(ExampleServiceProvider())
        return definitions
    }

    @Test("Dose's kernel tests: the provider's override, the shared logger, the chain through a provider's parameter")
    func doseKernelTests() throws {
        let kernel = try doseKernel()
        let logger = try kernel.get("logger", as: (any LoggerProtocol).self)
        let service3 = try kernel.get("dose.service3", as: Service3.self)
        #expect(logger.isDebugOutputEnabled(), "the override of the file's debug_output")
        #expect(logger === service3.logger, "the same logger")
        #expect(try kernel.get("exampleParam", as: String.self) == "FromExampleServiceProvider")
        let service2 = try kernel.get("dose.service2", as: Service2.self)
        #expect(service2.name == "Plop! Second Service Need the One FromExampleServiceProvider - Plopix - Third Argument")
        #expect(kernel.validate().isEmpty)
    }

    @Test("a provider's service may use a file's service by name, and extend wraps an instance before it is made")
    func providersAndExtend() throws {
        let definitions = try doseKernel()
        definitions.register("report", as: String.self) { context in
            "report by " + (try context.get("dose.service1", as: Service1.self)).name
        }
        definitions.extend("dose.service3", as: Service3.self) { service, _ in
            service
        }
        definitions.extend("report", as: String.self) { text, context in
            text + " (" + (try context.parameter("lambdakey", as: String.self)) + ")"
        }
        #expect(try definitions.get("report", as: String.self) == "report by Plopix (Plopix)")
        #expect(
            definitions.definition(of: "dose.service2")?.arguments == [
                .value(.string("Second Service")), .value(.string("Need the One")), .reference("exampleParam"),
                .reference("dose.service1"),
            ])
        #expect(definitions.definition(of: "lambdakey") == nil, "a parameter has no service definition")
        #expect(definitions.parameterNames == ["debug_output", "exampleParam", "lambdakey"])
        #expect(definitions.serviceNames == ["dose.service1", "dose.service2", "dose.service3", "logger", "report"])
    }

    static let json = #"""
        {
          "parameters": { "host": "%env(STIMPAK_TEST_HOST)%", "port": 8080, "ratio": 0.5, "name": "%env(UNSET_VARIABLE:-fallback)%",
                          "list": [1, "two", true], "nested": { "a": false } },
          "services": {
            "mailer": { "class": "App.Mailer", "arguments": ["@host", "@port", "@@literal"], "reuse": "transient", "tags": ["mail", "io"] },
            "session": { "class": "App.Mailer", "arguments": ["s", 1, "x"], "reuse": "inScope", "key": "web" }
          }
        }
        """#

    struct Mailer: Sendable {
        let host: String
        let port: Int
        let note: String
    }

    static let mailerTypes = ServiceTypes().type("App.Mailer") { arguments in
        Mailer(host: try arguments.string(0), port: try arguments.int(1), note: try arguments.string(2))
    }

    @Test("JSON: environment variables, @@ escapes, reuse, key and tags")
    func json() throws {
        let definitions = Definitions(types: Self.mailerTypes, environment: ["STIMPAK_TEST_HOST": "smtp.example"])
        try definitions.load(Data(Self.json.utf8), name: "app.json")
        let mailer = try definitions.get("mailer", as: Mailer.self)
        #expect(mailer.host == "smtp.example")
        #expect(mailer.port == 8080)
        #expect(mailer.note == "@literal")
        #expect(try definitions.get("name", as: String.self) == "fallback")
        #expect(try definitions.get("ratio", as: Double.self) == 0.5)
        #expect(try definitions.get("nested", as: [String: Any].self)["a"] as? Bool == false)
        #expect(definitions.services(taggedWith: "mail") == ["mailer"])
        #expect(definitions.definition(of: "session")?.reuse == .inScope)
        #expect(definitions.definition(of: "session")?.key == "web")
        let scope = definitions.container.openScope("request")
        let session = try definitions.get("session", as: Mailer.self, from: scope)
        #expect(session.host == "s")
        #expect(try definitions.container.openScope("request").require(Mailer.self, key: "web").host == "s")
    }

    @Test("files merge in order: a later file's definitions win")
    func merging() throws {
        let definitions = Definitions(types: Self.mailerTypes, environment: ["STIMPAK_TEST_HOST": "a"])
        try definitions.load(Data(Self.json.utf8), name: "defaults.json")
        try definitions.load(Data(#"{ "parameters": { "port": 2525 }, "services": { "mailer": { "class": "App.Mailer", "arguments": ["prod", "@port", "x"] } } }"#.utf8), name: "production.json")
        let mailer = try definitions.get("mailer", as: Mailer.self)
        #expect(mailer.host == "prod")
        #expect(mailer.port == 2525)
        #expect(definitions.definition(of: "mailer")?.reuse == .singleton, "the later definition, whole")
        #expect(definitions.definition(of: "mailer")?.file == "production.json")
    }

    @Test("services made from definitions obey the container: exactly once under races, disposal, cycles with names")
    func containerRules() async throws {
        final class Counter: DefinedService, @unchecked Sendable {
            static let made = Counted()
            init(arguments: DefinitionArguments) throws { Self.made.increment() }
        }
        final class Counted: @unchecked Sendable {
            private let lock = NSLock()
            private var value = 0
            func increment() { lock.lock(); value += 1; lock.unlock() }
            var count: Int { lock.lock(); defer { lock.unlock() }; return value }
        }
        let definitions = Definitions(types: ServiceTypes().type("Counter", Counter.self))
        try definitions.load(Data(#"{ "services": { "counter": { "class": "Counter" } } }"#.utf8), name: "c.json")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { _ = try? definitions.get("counter") } }
        }
        #expect(Counter.made.count == 1)

        let cyclic = Definitions(
            types: ServiceTypes()
                .type("A") { arguments in try arguments.service(0, as: String.self) }
                .type("B") { arguments in try arguments.service(0, as: String.self) })
        try cyclic.load(Data(#"{ "services": { "a": { "class": "A", "arguments": ["@b"] }, "b": { "class": "B", "arguments": ["@a"] } } }"#.utf8), name: "cycle.json")
        let problems = cyclic.validate()
        #expect(problems.map(\.code) == [.referenceCycle])
        #expect(problems.first?.description.contains("a → b → a") == true)
        let error = try #require(throws: ResolutionError.self) { try cyclic.get("a") }
        #expect(error.code == .dependencyCycle)
        #expect(error.pathDescription == #"String[key: "a"] → String[key: "b"] → String[key: "a"]"#)
    }

    final class Closeable: DefinedService, Disposable, @unchecked Sendable {
        static let closed = NSLock()
        nonisolated(unsafe) static var names: [String] = []
        let name: String
        init(arguments: DefinitionArguments) throws { name = try arguments.string(0) }
        func dispose() {
            Self.closed.lock()
            Self.names.append(name)
            Self.closed.unlock()
        }
    }

    @Test("a definition's .inScope instance lives in the scope and is disposed with it; a parameter read as a service is an error")
    func disposalAndKinds() throws {
        let definitions = Definitions(types: ServiceTypes().type("Closeable", Closeable.self), environment: [:])
        try definitions.load(
            Data(
                #"""
                { "parameters": { "label": "request" },
                  "services": { "connection": { "class": "Closeable", "arguments": ["@label"], "reuse": "inScope" },
                                "misuse": { "class": "Closeable", "arguments": ["x"] } } }
                """#.utf8), name: "scoped.json")
        let scope = definitions.container.openScope("request-1")
        let connection = try definitions.get("connection", as: Closeable.self, from: scope)
        #expect(try definitions.get("connection", as: Closeable.self, from: scope) === connection)
        scope.dispose()
        #expect(Closeable.names == ["request"])
        let reader = ServiceTypes().type("Reader") { arguments in try arguments.service(0, as: String.self) }
        let misuse = Definitions(types: reader, environment: [:])
        try misuse.load(Data(#"{ "parameters": { "p": 1 }, "services": { "r": { "class": "Reader", "arguments": ["@p"] } } }"#.utf8), name: "kinds.json")
        let error = try #require(throws: ConfigurationError.self) { try misuse.get("r") }
        #expect(error.code == .wrongKind)
        #expect(error.description.contains("reads argument 0 as a service, but @p is a parameter"))
    }

    @Test("an object set in code is read by value, service and context.parameter; readers of a file's values name its type")
    func objectsSetInCode() throws {
        let types = ServiceTypes()
            .type("Value") { arguments in try arguments.value(0, as: SimpleLogger.self) }
            .type("Service") { arguments in try arguments.service(0, as: (any LoggerProtocol).self) }
            .type("Raw") { arguments in try arguments.raw(0) }
            .type("Number") { arguments in try arguments.double(0) }
        let definitions = Definitions(types: types, environment: [:])
        let logger = SimpleLogger(true)
        try definitions.setParameter("logger", logger)
        try definitions.setParameter("ratio", 2)
        try definitions.load(
            Data(
                #"""
                { "services": {
                    "value": { "class": "Value", "arguments": ["@logger"] },
                    "service": { "class": "Service", "arguments": ["@logger"] },
                    "raw": { "class": "Raw", "arguments": ["@logger"] },
                    "number": { "class": "Number", "arguments": ["@ratio"] },
                    "notService": { "class": "Service", "arguments": ["@ratio"] },
                    "nothing": { "class": "Service", "arguments": ["@nowhere"] } } }
                """#.utf8), name: "objects.json")
        #expect(try definitions.get("value", as: SimpleLogger.self) === logger)
        #expect(try definitions.get("service", as: (any LoggerProtocol).self) === logger)
        #expect(try definitions.get("number", as: Double.self) == 2, "an Int set in code is a file's integer")
        let raw = try #require(throws: ConfigurationError.self) { try definitions.get("raw") }
        #expect(raw.detail == "the service raw reads argument 0 as a file's value, but @logger is a SimpleLogger set in code")
        let notService = try #require(throws: ConfigurationError.self) { try definitions.get("notService") }
        #expect(notService.code == .wrongKind)
        let nothing = try #require(throws: ConfigurationError.self) { try definitions.get("nothing") }
        #expect(nothing.code == .unknownReference, "a name nothing defines is not called a parameter")
        definitions.register("reads", as: Bool.self) { context in try context.parameter("logger", as: Bool.self) }
        let misread = try #require(throws: ConfigurationError.self) { try definitions.get("reads") }
        #expect(misread.detail == "reads reads the parameter logger as Bool, but it is a SimpleLogger set in code")
    }

    // MARK: Bad input

    func failure(_ text: String, types: ServiceTypes = DefinitionsTests.mailerTypes, name: String = "bad.json") -> ConfigurationError? {
        let definitions = Definitions(types: types, environment: [:])
        do {
            try definitions.load(Data(text.utf8), name: name)
            return nil
        } catch let error as ConfigurationError {
            return error
        } catch {
            return nil
        }
    }

    @Test("bad files: each error names the file, the key path and the fix")
    func badFiles() throws {
        let notJSON = try #require(failure("{ nope"))
        #expect(notJSON.code == .unreadable)
        #expect(notJSON.description.hasPrefix("Stimpak cannot use bad.json: it is not JSON"))
        let arguments = try #require(failure(#"{ "services": { "m": { "class": "App.Mailer", "arguments": "x" } } }"#))
        #expect(arguments.code == .malformed)
        #expect(arguments.path == "services.m.arguments")
        #expect(arguments.description.contains("arguments is a string, not an array"))
        let unknown = try #require(failure(#"{ "services": { "m": { "class": "App.Nope" } } }"#))
        #expect(unknown.code == .unknownType)
        #expect(unknown.description.contains("the type App.Nope is not declared (declared: App.Mailer)"))
        let env = try #require(failure(#"{ "parameters": { "p": "%env(NOT_SET)%" } }"#))
        #expect(env.code == .missingEnvironmentVariable)
        #expect(env.path == "parameters.p")
        let duplicate = try #require(failure(#"{ "parameters": { "m": 1 }, "services": { "m": { "class": "App.Mailer" } } }"#))
        #expect(duplicate.code == .duplicateName)
        let reuse = try #require(failure(#"{ "services": { "m": { "class": "App.Mailer", "reuse": "forever" } } }"#))
        #expect(reuse.description.contains("unknown reuse \"forever\""))
        let typo = try #require(failure(#"{ "services": { "m": { "class": "App.Mailer", "argumnets": [] } } }"#))
        #expect(typo.path == "services.m.argumnets")
        let deep = try #require(failure(String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)))
        #expect(deep.code == .unreadable)
        #expect(deep.description.contains("it nests 10000 levels deep"))
        let binary = try #require(failure("bplist00garbage", name: "bad.plist"))
        #expect(binary.description.contains("binary property list"))
        let notAPlist = try #require(failure("<plist><dict><key>a</key></plist>", name: "bad.plist"))
        #expect(notAPlist.code == .unreadable)
        for blank in ["", " \n\t"] {
            let empty = try #require(failure(blank, name: "empty.plist"))
            #expect(empty.description.hasPrefix("Stimpak cannot use empty.plist: it is empty or holds only blanks."))
        }
        let count = try #require(
            failure(
                #"{ "services": { "m": { "class": "Pair", "arguments": [1, 2, 3] } } }"#,
                types: ServiceTypes().type("Pair", argumentCounts: 2...2) { arguments in try arguments.int(0) + arguments.int(1) }))
        #expect(count.code == .wrongArgumentCount)
        #expect(count.detail == "the type Pair takes 2 arguments, but the definition gives 3")
    }

    @Test("bad definitions found when used: wrong types and counts, references to nothing, a parameter used as a service")
    func badDefinitions() throws {
        let definitions = Definitions(types: Self.mailerTypes, environment: [:])
        try definitions.load(
            Data(
                #"""
                { "parameters": { "port": "eighty", "host": "h" },
                  "services": {
                    "wrongType": { "class": "App.Mailer", "arguments": ["h", "@port", "x"] },
                    "tooFew": { "class": "App.Mailer", "arguments": ["h"] },
                    "dangling": { "class": "App.Mailer", "arguments": ["@nowhere", 1, "x"] },
                    "kinds": { "class": "App.Mailer", "arguments": ["@wrongType", 1, "x"] } } }
                """#.utf8), name: "app.json")
        let wrongType = try #require(throws: ConfigurationError.self) { try definitions.get("wrongType") }
        #expect(wrongType.code == .wrongType)
        #expect(wrongType.path == "services.wrongType.arguments[1]")
        #expect(wrongType.description.contains("reads argument 1 as Int, but the file has a string (\"eighty\")"))
        let tooFew = try #require(throws: ConfigurationError.self) { try definitions.get("tooFew") }
        #expect(tooFew.code == .missingArgument)
        #expect(tooFew.description.contains("reads argument 1, but its definition has 1"))
        let dangling = try #require(throws: ConfigurationError.self) { try definitions.get("dangling") }
        #expect(dangling.code == .unknownReference)
        let kinds = try #require(throws: ConfigurationError.self) { try definitions.get("kinds") }
        #expect(kinds.code == .wrongKind)
        #expect(kinds.description.contains("reads @wrongType as a value, but it is a service"))
        #expect(definitions.validate().map(\.code) == [.unknownReference])
        let missing = try #require(throws: ConfigurationError.self) { try definitions.get("nothing") }
        #expect(missing.code == .unknownName)
    }
}
