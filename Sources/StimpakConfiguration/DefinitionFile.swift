import Foundation
import Stimpak

/// One definition file, read and checked: its parameters (environment variables substituted) and its
/// services (types declared, arguments parsed). Reading never recurses deeper than `maximumDepth` and never
/// accepts more than `maximumSize` bytes.
struct DefinitionFile {
    var parameters: [String: ConfigurationValue] = [:]
    var services: [String: ServiceDefinition] = [:]

    static func parse(
        _ data: Data, name: String, format: Definitions.Format, environment: [String: String], types: ServiceTypes
    ) throws(ConfigurationError) -> DefinitionFile {
        let root = try decode(data, name: name, format: format)
        guard case .dictionary(let sections) = root else {
            throw ConfigurationError(.malformed, file: name, path: "", detail: "the top level is \(root.kind), not a dictionary")
        }
        for key in sections.keys where key != "parameters" && key != "services" {
            throw ConfigurationError(
                .malformed, file: name, path: key, detail: "unknown top-level entry \(String(reflecting: key)) (only parameters and services)")
        }
        var file = DefinitionFile()
        if let parameters = sections["parameters"] {
            guard case .dictionary(let values) = parameters else {
                throw ConfigurationError(.malformed, file: name, path: "parameters", detail: "parameters is \(parameters.kind), not a dictionary")
            }
            for (parameter, value) in values {
                file.parameters[parameter] = try substituted(value, path: "parameters.\(parameter)", file: name, environment: environment)
            }
        }
        if let services = sections["services"] {
            guard case .dictionary(let definitions) = services else {
                throw ConfigurationError(.malformed, file: name, path: "services", detail: "services is \(services.kind), not a dictionary")
            }
            for (service, definition) in definitions {
                file.services[service] = try parseService(service, definition, file: name, types: types)
            }
        }
        return file
    }

    /// The document as values, after checking its size and nesting without recursion.
    private static func decode(_ data: Data, name: String, format: Definitions.Format) throws(ConfigurationError) -> ConfigurationValue {
        guard data.count <= Definitions.maximumSize else {
            throw ConfigurationError(.unreadable, file: name, path: "", detail: "it has \(data.count) bytes")
        }
        let bytes = [UInt8](data)
        // The first byte that is not blank: a definition copied from a document may start with blank lines or
        // indentation (the plist of Dose's README does), and a property list's XML declaration must come first.
        // A file with none is one error whatever its format: the parsers tell an empty file from blanks.
        guard let start = bytes.firstIndex(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else {
            throw ConfigurationError(.unreadable, file: name, path: "", detail: "it is empty or holds only blanks")
        }
        let firstByte = bytes[start]
        let isJSON: Bool
        switch format {
        case .json: isJSON = true
        case .propertyList: isJSON = false
        case .automatic: isJSON = firstByte == UInt8(ascii: "{") || firstByte == UInt8(ascii: "[")
        }
        if !isJSON && bytes.starts(with: Array("bplist".utf8)) {
            throw ConfigurationError(.unreadable, file: name, path: "", detail: "it is a binary property list; only XML property lists are read")
        }
        let depth = isJSON ? jsonDepth(bytes) : xmlDepth(bytes)
        guard depth <= Definitions.maximumDepth else {
            throw ConfigurationError(.unreadable, file: name, path: "", detail: "it nests \(depth) levels deep")
        }
        let object: Any
        do {
            if isJSON {
                object = try JSONSerialization.jsonObject(with: data)
            } else {
                object = try PropertyListSerialization.propertyList(from: data.subdata(in: start..<data.count), format: nil)
            }
        } catch {
            let kind = isJSON ? "JSON" : "a property list"
            throw ConfigurationError(.unreadable, file: name, path: "", detail: "it is not \(kind) (\(describe(error)))")
        }
        return try ConfigurationValue.decode(object, path: "", file: name)
    }

    private static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    /// The deepest nesting of `[` and `{` outside strings.
    private static func jsonDepth(_ bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// The deepest nesting of elements (any `<tag>` not closed by itself), a bound on the property list's.
    private static func xmlDepth(_ bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0, index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<"), index + 1 < bytes.count else {
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count && bytes[end] != UInt8(ascii: ">") { end += 1 }
            let next = bytes[index + 1]
            if next == UInt8(ascii: "/") {
                depth -= 1
            } else if next != UInt8(ascii: "?") && next != UInt8(ascii: "!") && !(end > index && bytes[end - 1] == UInt8(ascii: "/")) {
                depth += 1
                deepest = max(deepest, depth)
            }
            index = end + 1
        }
        return deepest
    }

    /// `value` with `%env(NAME)%` and `%env(NAME:-default)%` strings replaced by the environment's value.
    private static func substituted(
        _ value: ConfigurationValue, path: String, file: String, environment: [String: String]
    ) throws(ConfigurationError) -> ConfigurationValue {
        guard case .string(let text) = value, text.hasPrefix("%env("), text.hasSuffix(")%") else { return value }
        let inner = text.dropFirst(5).dropLast(2)
        let name: Substring
        let fallback: String?
        if let separator = inner.range(of: ":-") {
            name = inner[..<separator.lowerBound]
            fallback = String(inner[separator.upperBound...])
        } else {
            name = inner
            fallback = nil
        }
        if let found = environment[String(name)] { return .string(found) }
        if let fallback { return .string(fallback) }
        throw ConfigurationError(
            .missingEnvironmentVariable, file: file, path: path, detail: "the environment variable \(name) is not set")
    }

    private static let serviceEntries: Set<String> = ["class", "arguments", "reuse", "key", "tags"]

    private static func parseService(
        _ name: String, _ value: ConfigurationValue, file: String, types: ServiceTypes
    ) throws(ConfigurationError) -> ServiceDefinition {
        let path = "services.\(name)"
        guard case .dictionary(let entries) = value else {
            throw ConfigurationError(.malformed, file: file, path: path, detail: "the definition is \(value.kind), not a dictionary")
        }
        for key in entries.keys.sorted() where !serviceEntries.contains(key) {
            throw ConfigurationError(
                .malformed, file: file, path: "\(path).\(key)",
                detail: "unknown entry \(String(reflecting: key)) (class, arguments, reuse, key, tags)")
        }
        guard case .string(let typeName)? = entries["class"] else {
            throw ConfigurationError(.malformed, file: file, path: "\(path).class", detail: "class is missing or not a string")
        }
        guard types.entries[typeName] != nil else {
            let known = types.names.prefix(10).joined(separator: ", ")
            throw ConfigurationError(
                .unknownType, file: file, path: "\(path).class",
                detail: "the type \(typeName) is not declared (declared: \(known.isEmpty ? "none" : known))")
        }
        var arguments: [DefinitionArgument] = []
        switch entries["arguments"] {
        case nil: break
        case .array(let values)?:
            for (position, value) in values.enumerated() {
                arguments.append(try argument(value, path: "\(path).arguments[\(position)]", file: file))
            }
        case let other?:
            throw ConfigurationError(.malformed, file: file, path: "\(path).arguments", detail: "arguments is \(other.kind), not an array")
        }
        if let counts = types.entries[typeName]?.argumentCounts, !counts.contains(arguments.count) {
            throw ConfigurationError(
                .wrongArgumentCount, file: file, path: "\(path).arguments",
                detail: "the type \(typeName) takes \(countsDescription(counts)), but the definition gives \(arguments.count)")
        }
        var reuse = Reuse.singleton
        switch entries["reuse"] {
        case nil: break
        case .string(let text)?: reuse = try parseReuse(text, path: "\(path).reuse", file: file)
        case let other?:
            throw ConfigurationError(.malformed, file: file, path: "\(path).reuse", detail: "reuse is \(other.kind), not a string")
        }
        var key = name
        switch entries["key"] {
        case nil: break
        case .string(let text)?: key = text
        case let other?:
            throw ConfigurationError(.malformed, file: file, path: "\(path).key", detail: "key is \(other.kind), not a string")
        }
        var tags: [String] = []
        switch entries["tags"] {
        case nil: break
        case .array(let values)?:
            for (index, value) in values.enumerated() {
                guard case .string(let tag) = value else {
                    throw ConfigurationError(.malformed, file: file, path: "\(path).tags[\(index)]", detail: "a tag is \(value.kind), not a string")
                }
                tags.append(tag)
            }
        case let other?:
            throw ConfigurationError(.malformed, file: file, path: "\(path).tags", detail: "tags is \(other.kind), not an array")
        }
        return ServiceDefinition(name: name, typeName: typeName, arguments: arguments, reuse: reuse, key: key, tags: tags, file: file)
    }

    /// `2 arguments`, `1 to 3 arguments`, `at least 1 argument`, `at most 3 arguments`.
    private static func countsDescription(_ counts: ClosedRange<Int>) -> String {
        func arguments(_ count: Int) -> String { count == 1 ? "1 argument" : "\(count) arguments" }
        if counts.lowerBound == counts.upperBound { return arguments(counts.lowerBound) }
        if counts.upperBound == Int.max { return "at least \(arguments(counts.lowerBound))" }
        if counts.lowerBound <= 0 { return "at most \(arguments(counts.upperBound))" }
        return "\(counts.lowerBound) to \(arguments(counts.upperBound))"
    }

    /// `@name` is a reference, `@@text` the literal `@text`, anything else a literal.
    private static func argument(_ value: ConfigurationValue, path: String, file: String) throws(ConfigurationError) -> DefinitionArgument {
        guard case .string(let text) = value, text.hasPrefix("@") else { return .value(value) }
        if text.hasPrefix("@@") { return .value(.string(String(text.dropFirst()))) }
        let name = String(text.dropFirst())
        guard !name.isEmpty else {
            throw ConfigurationError(.malformed, file: file, path: path, detail: "\"@\" names nothing (write @@ for a literal @)")
        }
        return .reference(name)
    }

    private static func parseReuse(_ text: String, path: String, file: String) throws(ConfigurationError) -> Reuse {
        switch text {
        case "singleton": return .singleton
        case "eagerSingleton": return .eagerSingleton
        case "transient": return .transient
        case "inScope": return .inScope
        case "weak": return .weak
        case "graph": return .graph
        default:
            if text.hasPrefix("scopedTo:"), text.count > "scopedTo:".count {
                return .scopedTo(String(text.dropFirst("scopedTo:".count)))
            }
            throw ConfigurationError(
                .malformed, file: file, path: path,
                detail: "unknown reuse \(String(reflecting: text)) (singleton, eagerSingleton, transient, inScope, weak, graph, scopedTo:<scope key>)")
        }
    }
}
