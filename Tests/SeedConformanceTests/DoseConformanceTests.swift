import Foundation
import Stimpak
import StimpakConfiguration
import Testing

/// Dose's README and tests (its `DoseKernelTests` and `DoseContainerTests`), written as the migration table of
/// `MigratingFromDose.md` says: each test names the rows it exercises.
@Suite("Dose conformance") struct DoseConformanceTests {
    // MARK: Definition files

    @Test(
        "Rows: plist definition files; class names; getKeys(): the README's plist loads verbatim from a file, and its JSON twin",
        arguments: [false, true])
    func definitionFiles(json: Bool) throws {
        let definitions = Definitions(types: Dose.readmeTypes, environment: [:])
        if json {
            try definitions.load(Data(Dose.readmeJSON.utf8), name: "services.json")
        } else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dose-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("services.plist")
            try Data(Dose.readmePlist.utf8).write(to: url)
            try definitions.load(contentsOf: url)
        }
        #expect(definitions.names == ["debug_output", "dose.service1", "dose.service2", "lambdakey"])
        #expect(definitions.parameterNames == ["debug_output", "lambdakey"])
        #expect(definitions.serviceNames == ["dose.service1", "dose.service2"])
        #expect(definitions.definition(of: "dose.service2")?.typeName == "DoseTests.Service2")
        let service2 = try definitions.get("dose.service2", as: Dose.ReadmeService2.self)
        #expect(service2.name == "Second Service")
        #expect(service2.service1.name == "A VALUE", "@lambdakey reads the parameter")
        #expect(service2.service1.subname == "EMPTY SUBNAME", "Dose's Service1 takes a subname from a third argument only")
        #expect(try definitions.get("debug_output", as: Bool.self))
    }

    // MARK: Identities

    @Test("Rows: Kernel.instance.get; @name: one instance by name, by type and key, and as another's argument")
    func identities() throws {
        let kernel = try Dose.kernel()
        let service1 = try kernel.get("dose.service1", as: Dose.Service1.self)
        #expect(service1.name == "Plopix")
        #expect(service1.subname == "Third Argument")
        #expect(try kernel.get("dose.service1") as? Dose.Service1 === service1)
        #expect(try kernel.container.require(Dose.Service1.self, key: "dose.service1") === service1)
        // DoseKernelTests.testLogger: the logger fetched by name is the one inside dose.service3.
        let logger = try kernel.get("logger", as: (any Dose.LoggerProtocol).self)
        let service3 = try kernel.get("dose.service3", as: Dose.Service3.self)
        #expect(service3.logger === logger)
        #expect(service3.name == "Service3")
        // DoseKernelTests.testChain: a file's parameter, a provider's parameter and a service, by @name.
        let service2 = try kernel.get("dose.service2", as: Dose.Service2.self)
        #expect(service2.name == "Plop! Second Service Need the One FromExampleServiceProvider - Plopix - Third Argument")
        // `@@` writes a literal `@`.
        try kernel.load(
            Data(#"{ "services": { "literal": { "class": "DoseTests.Service1", "arguments": ["@@lambdakey"] } } }"#.utf8),
            name: "literal.json")
        #expect(try kernel.get("literal", as: Dose.Service1.self).name == "@lambdakey")
        #expect(kernel.validate().isEmpty)
    }

    // MARK: Creation counts and timing

    /// Dose's types, with the `Service1`s made counted in `made`.
    static func countingTypes(_ made: Dose.Counter) -> ServiceTypes {
        ServiceTypes()
            .type("DoseTests.Service1", Dose.Service1.self) { arguments in
                made.increment()
                return try Dose.Service1(arguments: arguments)
            }
            .type("DoseTests.Service2", Dose.ReadmeService2.self)
    }

    @Test("Row: lazily created shared services: nothing is made at load, the first get makes it, every get returns it")
    func lazySharedServices() throws {
        let made = Dose.Counter()
        let definitions = Definitions(types: Self.countingTypes(made), environment: [:])
        try definitions.load(Data(Dose.readmePlist.utf8), name: "services.plist")
        #expect(definitions.definition(of: "dose.service1")?.reuse == .singleton)
        #expect(made.count == 0, "loading and reading definitions make nothing")
        #expect(definitions.container.root.report().instances.isEmpty)
        // "Note that the call to a service trigger its instanciation."
        let first = try definitions.get("dose.service1", as: Dose.Service1.self)
        #expect(made.count == 1)
        // DoseContainerTests.testInstanciationCount: three gets, one instance.
        let second = try definitions.get("dose.service1", as: Dose.Service1.self)
        let third = try definitions.container.require(Dose.Service1.self, key: "dose.service1")
        #expect(first === second && second === third)
        #expect(try definitions.get("dose.service2", as: Dose.ReadmeService2.self).service1 === first)
        #expect(made.count == 1, "an argument is the shared instance")
    }

    @Test("Row: lazily created shared services: first gets that race make one instance")
    func lazySharedServicesUnderRaces() async throws {
        let made = Dose.Counter()
        let definitions = Definitions(types: Self.countingTypes(made), environment: [:])
        try definitions.load(Data(Dose.readmePlist.utf8), name: "services.plist")
        let identities = await withTaskGroup(of: ObjectIdentifier?.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let name = index.isMultiple(of: 2) ? "dose.service1" : "dose.service2"
                    let instance = try? definitions.get(name)
                    let service1 = (instance as? Dose.ReadmeService2)?.service1 ?? (instance as? Dose.Service1)
                    return service1.map(ObjectIdentifier.init)
                }
            }
            return await group.reduce(into: Set<ObjectIdentifier?>()) { $0.insert($1) }
        }
        #expect(identities.count == 1)
        #expect(!identities.contains(nil))
        #expect(made.count == 1)
    }

    // MARK: Providers

    @Test("Row: register(provider, values): the values are set after the provider's register, so they win")
    func providerValuesWin() throws {
        // Dose's TKernel: the file's debug_output is false, the value given with the provider true.
        let kernel = try Dose.kernel()
        #expect(try kernel.get("logger", as: (any Dose.LoggerProtocol).self).isDebugOutputEnabled(), "testLogger: the override")
        #expect(try kernel.get("exampleParam", as: String.self) == "FromExampleServiceProvider", "testExampleProvider")
        // Silex's order: a provider sets its defaults in register, and the caller's values replace them.
        let overridden = Definitions(types: Dose.types, environment: [:])
        try overridden.install(Dose.DefaultingLoggerProvider(), parameters: ["debug_output": true])
        #expect(try overridden.get("debug_output", as: Bool.self))
        #expect(try overridden.get("logger", as: (any Dose.LoggerProtocol).self).isDebugOutputEnabled())
        // Without values, the provider's default stands.
        let defaults = Definitions(types: Dose.types, environment: [:])
        try defaults.install(Dose.DefaultingLoggerProvider())
        #expect(try !defaults.get("logger", as: (any Dose.LoggerProtocol).self).isDebugOutputEnabled())
    }

    /// Code-only registrations, installed in the container.
    struct DeviceModule: Module {
        func register(in container: Container) {
            container.register(Dose.DeviceInformation.self, reuse: .singleton) { Dose.DeviceInformation() }
        }
    }

    @Test("Rows: a provider class; app[name] = { container in … }, attach: services defined in code, made lazily, by name")
    func servicesInCode() throws {
        let definitions = Definitions(types: Dose.types, environment: [:])
        let made = Dose.Counter()
        try definitions.setParameter("DUB", "Dublin")
        definitions.register("lazy1", as: Dose.Service1.self) { _ in
            made.increment()
            return Dose.Service1(name: "Lazy Bob")
        }
        definitions.register("lazy2", as: Dose.Service1.self) { _ in Dose.Service1(name: "Lazy Bob hyper styly") }
        definitions.register("service_closure", as: String.self) { _ in "06-24-2015 10" }
        definitions.register("mixed", as: Dose.Service1.self) { context in
            let city = try context.get("DUB", as: String.self)
            let date = try context.get("service_closure", as: String.self)
            return Dose.Service1(name: "Super Lazy From " + city + " hyper styly at" + date)
        }
        try definitions.install(Dose.SimpleDeviceInformationProvider())
        #expect(made.count == 0)
        // DoseContainerTests.testInstanciationCount and testMixedCall.
        let lazy = try (0..<3).map { _ in try definitions.get("lazy1", as: Dose.Service1.self) }
        #expect(lazy.allSatisfy { $0 === lazy[0] })
        #expect(made.count == 1)
        let mixed = try definitions.get("mixed", as: Dose.Service1.self)
        #expect(mixed !== lazy[0])
        #expect(mixed.name == "Super Lazy From Dublin hyper styly at06-24-2015 10")
        // testCreationObject.
        #expect(try definitions.get("lazy2") is Dose.Service1)
        #expect(try definitions.get("device_information") is Dose.DeviceInformation)
        #expect(definitions.definition(of: "lazy1") != nil, "testRawValue: a service defined by a closure")
        // A Module registers in the container; a service in code reaches it through its scope.
        definitions.container.install(DeviceModule())
        definitions.register("device_user", as: Dose.DeviceInformation.self) { context in
            try context.scope.require(Dose.DeviceInformation.self)
        }
        let device = try definitions.container.require(Dose.DeviceInformation.self)
        #expect(try definitions.get("device_user", as: Dose.DeviceInformation.self) === device)
    }

    // MARK: Parameters and stored objects

    @Test("Row: app[name] = value: parameters set in code, returned by get, read by @name, the latest value winning")
    func parameters() throws {
        let definitions = Definitions(types: Dose.readmeTypes, environment: [:])
        try definitions.load(Data(Dose.readmePlist.utf8), name: "services.plist")
        try definitions.setParameter("DUB", "Dublin")
        #expect(try definitions.get("DUB", as: String.self) == "Dublin", "testSimpleString")
        try definitions.setParameter("lambdakey", "From code")
        #expect(try definitions.get("dose.service1", as: Dose.Service1.self).name == "From code")
        // testParamClosureCall: a closure kept as a parameter, not called.
        let paramClosure: @Sendable (String) -> String = { format in "formatted as " + format }
        try definitions.setParameter("param_closure", paramClosure)
        let closure = try definitions.get("param_closure", as: (@Sendable (String) -> String).self)
        #expect(closure("dd-mm-MM-YY HH") == "formatted as dd-mm-MM-YY HH")
        // A value of a type no file holds is kept as it is too.
        try definitions.setParameter("ratio", Float(0.5))
        #expect(try definitions.get("ratio", as: Float.self) == 0.5)
    }

    @Test("Row: app[name] = object: an object is stored as it is; get returns that instance and @name passes it")
    func storedObjects() throws {
        let definitions = Definitions(types: Dose.readmeTypes, environment: [:])
        let direct = Dose.Service1(name: "Non Lazy Bob")
        try definitions.setParameter("direct1", direct)
        // testCreationObject and testRawValue: made already, stored directly, not a closure.
        #expect(try definitions.get("direct1") as? Dose.Service1 === direct)
        #expect(try definitions.get("direct1", as: Dose.Service1.self) === direct)
        #expect(definitions.parameterNames == ["direct1"])
        #expect(definitions.definition(of: "direct1") == nil)
        try definitions.load(
            Data(
                #"""
                { "services": {
                    "uses.direct": { "class": "DoseTests.Service2", "arguments": ["Second Service", "@direct1"] },
                    "misreads.direct": { "class": "DoseTests.Service1", "arguments": ["@direct1"] } } }
                """#.utf8),
            name: "direct.json")
        #expect(try definitions.get("uses.direct", as: Dose.ReadmeService2.self).service1 === direct)
        #expect(definitions.validate().isEmpty)
        let misread = try #require(throws: ConfigurationError.self) { try definitions.get("misreads.direct") }
        #expect(misread.code == .wrongType)
        #expect(misread.path == "services.misreads.direct.arguments[0]")
        #expect(misread.detail.hasPrefix("the service misreads.direct reads argument 0 as String, but @direct1 is a "))
        #expect(misread.detail.hasSuffix("Service1 set in code"))
        // Objects given with a provider are stored the same way.
        let clock = Dose.DeviceInformation()
        try definitions.install(Dose.ExampleServiceProvider(), parameters: ["clock": clock, "retries": 3])
        #expect(try definitions.get("clock", as: Dose.DeviceInformation.self) === clock)
        #expect(try definitions.get("retries", as: Int.self) == 3)
    }

    // MARK: Extend

    @Test("Row: extend: DoseContainerTests.testExtended, through extend(_:as:_:) and through decorate(_:key:_:)")
    func extend() throws {
        let definitions = Definitions(types: Dose.types, environment: [:])
        definitions.register("lazy_extendable", as: Dose.Service1.self) { _ in
            Dose.Service1(name: "Lazy Bob should be extended")
        }
        definitions.extend("lazy_extendable", as: Dose.Service1.self) { service, _ in
            Dose.Service1(name: service.name + " => Extended!!")
        }
        let extended = try definitions.get("lazy_extendable", as: Dose.Service1.self)
        #expect(extended.name == "Lazy Bob should be extended => Extended!!")
        // Unlike Dose's, an extension added once the service is made applies to the instances made after it.
        definitions.extend("lazy_extendable", as: Dose.Service1.self) { service, _ in Dose.Service1(name: "again") }
        #expect(try definitions.get("lazy_extendable", as: Dose.Service1.self) === extended)

        // A file's service, extended: what takes it as an argument gets the extended instance.
        let kernel = try Dose.kernel()
        kernel.extend("dose.service1", as: Dose.Service1.self) { service, context in
            Dose.Service1(name: service.name + " (" + (try context.parameter("exampleParam", as: String.self)) + ")", subname: service.subname)
        }
        kernel.container.decorate(Dose.Service1.self, key: "dose.service1") { _, service in
            Dose.Service1(name: service.name + " => Extended!!", subname: service.subname)
        }
        let service1 = try kernel.get("dose.service1", as: Dose.Service1.self)
        #expect(service1.name == "Plopix (FromExampleServiceProvider) => Extended!!")
        #expect(
            try kernel.get("dose.service2", as: Dose.Service2.self).name
                == "Plop! Second Service Need the One FromExampleServiceProvider - \(service1.name) - Third Argument")
    }

    // MARK: Errors

    @Test("Row: a crash (as!) or nil: a missing name, a wrong type and a name taken are errors that say what to do")
    func errors() throws {
        let kernel = try Dose.kernel()
        // testCreationObject: nonexistantkey.
        let unknown = try #require(throws: ConfigurationError.self) { try kernel.get("nonexistantkey") }
        #expect(unknown.code == .unknownName)
        #expect(
            unknown.description == "Stimpak cannot use the definitions at nonexistantkey: nothing is defined under the name nonexistantkey."
                + " Fix: load a file or install a provider that defines it; `names` lists what is defined.")
        let wrongType = try #require(throws: ConfigurationError.self) { try kernel.get("exampleParam", as: Int.self) }
        #expect(wrongType.code == .wrongType)
        #expect(wrongType.detail == "exampleParam is a String, not a Int")
        // A parameter may not take a service's name: the value is refused with an error, not dropped.
        let taken = try #require(throws: ConfigurationError.self) { try kernel.setParameter("dose.service1", "One") }
        #expect(taken.code == .duplicateName)
        #expect(taken.path == "parameters.dose.service1")
        #expect(
            taken.description == "Stimpak cannot use the definitions at parameters.dose.service1: dose.service1 is a service (from services.plist),"
                + " so it cannot be set as a parameter. Fix: give the parameter and the service different names.")
        let viaProvider = try #require(throws: ConfigurationError.self) {
            try kernel.install(Dose.ExampleServiceProvider(), parameters: ["logger": "none", "verbose": true])
        }
        #expect(viaProvider.path == "parameters.logger")
        #expect(!kernel.parameterNames.contains("verbose"), "none of the values is set")
        #expect(try kernel.get("dose.service1", as: Dose.Service1.self).name == "Plopix")
    }

    @Test("Errors: an empty file and a file of blanks are one error", arguments: ["", "   ", "\n\t \r\n"])
    func emptyFiles(text: String) throws {
        for format in [Definitions.Format.automatic, .propertyList, .json] {
            let definitions = Definitions(types: Dose.types, environment: [:])
            let error = try #require(throws: ConfigurationError.self) {
                try definitions.load(Data(text.utf8), name: "services.plist", format: format)
            }
            #expect(error.code == .unreadable)
            #expect(error.description == "Stimpak cannot use services.plist: it is empty or holds only blanks. Fix: give an XML property list or a JSON document (at most 4 MB, nested at most 64 levels).")
            #expect(definitions.names.isEmpty)
        }
    }

    @Test("Row: init(args:): an argument count the declared type cannot take is refused when the file loads")
    func argumentCounts() throws {
        let definitions = Definitions(types: Dose.readmeTypes, environment: [:])
        try definitions.load(Data(Dose.readmePlist.utf8), name: "services.plist")
        // The README's Service2 reads two arguments: a third is refused, and the file with it.
        let third = #"""
            { "parameters": { "extra": 1 },
              "services": { "dose.service2": { "class": "DoseTests.Service2", "arguments": ["Second Service", "@dose.service1", "x"] } } }
            """#
        let tooMany = try #require(throws: ConfigurationError.self) { try definitions.load(Data(third.utf8), name: "extra.json") }
        #expect(tooMany.code == .wrongArgumentCount)
        #expect(tooMany.path == "services.dose.service2.arguments")
        #expect(
            tooMany.description == "Stimpak cannot use extra.json at services.dose.service2.arguments: the type DoseTests.Service2 takes 2 arguments,"
                + " but the definition gives 3. Fix: give the definition as many arguments as the type takes, or declare the counts it takes (argumentCounts).")
        #expect(definitions.definition(of: "dose.service2")?.arguments.count == 2)
        #expect(!definitions.names.contains("extra"), "the file is refused whole")
        // Dose's Service1 takes one to three, as its `init(args:)` reads them.
        for count in [0, 4] {
            let arguments = Array(repeating: #""x""#, count: count).joined(separator: ", ")
            let file = #"{ "services": { "s": { "class": "DoseTests.Service1", "arguments": [\#(arguments)] } } }"#
            let error = try #require(throws: ConfigurationError.self) { try definitions.load(Data(file.utf8), name: "s.json") }
            #expect(error.detail == "the type DoseTests.Service1 takes 1 to 3 arguments, but the definition gives \(count)")
        }
        // A type declared with a closure states its counts with argumentCounts:.
        let types = ServiceTypes()
            .type("Tagged", String.self, argumentCounts: 1...Int.max) { arguments in try arguments.string(0) }
            .type("Free") { arguments in try arguments.string(1) }
        let closures = Definitions(types: types, environment: [:])
        let none = try #require(throws: ConfigurationError.self) {
            try closures.load(Data(#"{ "services": { "t": { "class": "Tagged" } } }"#.utf8), name: "t.json")
        }
        #expect(none.detail == "the type Tagged takes at least 1 argument, but the definition gives 0")
        // A type that declares no counts takes any number; one it reads and lacks is an error when it is made.
        try closures.load(Data(#"{ "services": { "f": { "class": "Free", "arguments": ["a"] } } }"#.utf8), name: "f.json")
        let missing = try #require(throws: ConfigurationError.self) { try closures.get("f") }
        #expect(missing.code == .missingArgument)
        #expect(missing.detail == "the service f reads argument 1, but its definition has 1")
    }
}
