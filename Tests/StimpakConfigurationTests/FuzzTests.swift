import Foundation
import StimpakConfiguration
import StimpakTestSupport
import Testing

/// Random and mutated definition files: every one loads or fails with a `ConfigurationError`, never a crash,
/// a hang or a huge allocation. Brief in CI; `STIMPAK_FUZZ_ITERATIONS=100000 swift test --filter FuzzTests`
/// runs it longer.
@Suite struct FuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["STIMPAK_FUZZ_ITERATIONS"] ?? "") ?? 3_000

    /// A small deterministic generator, so that a failure can be replayed from its seed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
    }

    static let seeds: [[UInt8]] = [
        Array(doseReadmePlist.utf8), Array(doseTestsPlist.utf8),
        Array(#"{ "parameters": { "a": 1, "b": [true, "x", 2.5] }, "services": { "s": { "class": "DoseTests.Service1", "arguments": ["@a", "x", "@@y"] } } }"#.utf8),
    ]

    static let tokens: [[UInt8]] = [
        "<dict>", "</dict>", "<array>", "</array>", "<key>", "</key>", "<string>@", "{", "}",
        "[", "]", "\"", ":", ",", "@", "@@", "%env(", ")%", "\\u0000", "<true/>", "&#0;",
    ].map { Array($0.utf8) }

    func mutate(_ bytes: [UInt8], _ random: inout Generator) -> [UInt8] {
        var bytes = bytes
        for _ in 0...random.below(8) {
            switch random.below(6) {
            case 0 where !bytes.isEmpty: bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            case 1 where !bytes.isEmpty: bytes.removeSubrange(random.below(bytes.count)..<bytes.count)
            case 2: bytes.insert(contentsOf: Self.tokens[random.below(Self.tokens.count)], at: random.below(bytes.count + 1))
            case 3 where bytes.count > 2:
                let start = random.below(bytes.count)
                let end = min(bytes.count, start + random.below(64))
                bytes.insert(contentsOf: bytes[start..<end], at: random.below(bytes.count + 1))
            case 4 where !bytes.isEmpty: bytes.remove(at: random.below(bytes.count))
            default: bytes.append(UInt8(truncatingIfNeeded: random.next()))
            }
        }
        return bytes
    }

    @Test("random and mutated files load or fail cleanly")
    func fuzz() {
        var random = Generator(state: 0x5EED)
        var loaded = 0
        var failed = 0
        for iteration in 0..<Self.iterations {
            let bytes: [UInt8]
            if iteration % 4 == 0 {
                bytes = (0..<random.below(256)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = mutate(Self.seeds[random.below(Self.seeds.count)], &random)
            }
            let definitions = Definitions(types: doseTypes, environment: [:])
            do {
                try definitions.load(Data(bytes), name: "fuzz-\(iteration)")
                loaded += 1
                // What loaded must also fail cleanly, or succeed, when used.
                for name in definitions.names { _ = try? definitions.get(name) }
                _ = definitions.validate()
            } catch is ConfigurationError {
                failed += 1
            } catch {
                Issue.record("iteration \(iteration) threw \(type(of: error)): \(error)")
            }
        }
        #expect(loaded + failed == Self.iterations)
        #expect(failed > 0 && loaded > 0, "the mutations reach both outcomes")
    }
}
