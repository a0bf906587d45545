import Foundation
import StimpakConfiguration
import Testing

/// `validate()` on large definitions: one pass over the references, without recursion, that still names
/// every loop with its path.
@Suite struct DefinitionsValidationTests {
    static let length = 20_000

    /// Services `s0` … `s<length - 1>`, each taking the next as its argument; the last takes `last`.
    static func chain(length: Int, last: String?) throws -> Definitions {
        let types = ServiceTypes().type("Link") { arguments in arguments.count }
        let definitions = Definitions(types: types, environment: [:])
        var services: [String] = []
        services.reserveCapacity(length)
        for index in 0..<length {
            let next = index + 1 < length ? "s\(index + 1)" : last
            let arguments = next.map { #"["@\#($0)"]"# } ?? "[]"
            services.append(#""s\#(index)": { "class": "Link", "arguments": \#(arguments) }"#)
        }
        let file = #"{ "services": { "# + services.joined(separator: ", ") + " } }"
        try definitions.load(Data(file.utf8), name: "chain.json")
        return definitions
    }

    /// Not timed (a shared CI machine is not a clock): a recursive walk would overflow the stack at this depth.
    @Test("a 20,000-service reference chain validates without recursion")
    func longChainValidates() throws {
        let definitions = try Self.chain(length: Self.length, last: nil)
        #expect(definitions.validate().isEmpty)
    }

    @Test("a 20,000-service loop is reported once, with its whole path")
    func longLoopIsReportedWithItsPath() throws {
        let definitions = try Self.chain(length: Self.length, last: "s0")
        let problems = definitions.validate()
        #expect(problems.map(\.code) == [.referenceCycle])
        #expect(problems.first?.path == "services.s0")
        let detail = problems.first?.detail ?? ""
        #expect(detail.hasPrefix("the services refer to each other in a loop: s0 → s1 → s2"))
        #expect(detail.hasSuffix("s19998 → s19999 → s0"))
        #expect(detail.components(separatedBy: " → ").count == Self.length + 1)
    }

    @Test("every loop is reported once with its path, including a service that refers to itself")
    func separateLoopsAreEachReported() throws {
        let types = ServiceTypes().type("Link") { arguments in arguments.count }
        let definitions = Definitions(types: types, environment: [:])
        try definitions.load(
            Data(
                #"""
                { "parameters": { "p": 1 },
                  "services": {
                    "a": { "class": "Link", "arguments": ["@b", "@p"] },
                    "b": { "class": "Link", "arguments": ["@c", "@a", "@a"] },
                    "c": { "class": "Link", "arguments": ["@a"] },
                    "d": { "class": "Link", "arguments": ["@a", "@d"] },
                    "e": { "class": "Link", "arguments": ["@f"] },
                    "f": { "class": "Link", "arguments": ["@e"] } } }
                """#.utf8), name: "loops.json")
        let problems = definitions.validate()
        #expect(problems.map(\.code) == [.referenceCycle, .referenceCycle, .referenceCycle, .referenceCycle])
        #expect(
            problems.map(\.detail) == [
                "the services refer to each other in a loop: a → b → c → a",
                "the services refer to each other in a loop: a → b → a",
                "the services refer to each other in a loop: d → d",
                "the services refer to each other in a loop: e → f → e",
            ])
    }
}
