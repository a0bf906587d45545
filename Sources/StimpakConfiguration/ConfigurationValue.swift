import Foundation

/// A value of a definition file: what a parameter or a literal argument holds, decoded from a property list
/// or JSON into plain Swift values.
public enum ConfigurationValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([ConfigurationValue])
    case dictionary([String: ConfigurationValue])

    /// The kind, for messages: `a string`, `an integer`…
    public var kind: String {
        switch self {
        case .bool: return "a boolean"
        case .int: return "an integer"
        case .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }

    public var description: String {
        switch self {
        case .bool(let value): return String(value)
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return String(reflecting: value)
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let values):
            return "[" + values.keys.sorted().map { "\(String(reflecting: $0)): \(values[$0]!)" }.joined(separator: ", ") + "]"
        }
    }

    /// The plain Swift value: `Bool`, `Int`, `Double`, `String`, `[Any]`, `[String: Any]`.
    public var plain: Any {
        switch self {
        case .bool(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .string(let value): return value
        case .array(let values): return values.map(\.plain)
        case .dictionary(let values): return values.mapValues(\.plain)
        }
    }

    /// A value that code hands over (a provider's parameter, an override), or nil for a type a file cannot hold.
    public init?(_ value: Any) {
        switch value {
        case let value as ConfigurationValue: self = value
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .int(value)
        case let value as Double: self = .double(value)
        case let value as String: self = .string(value)
        case let values as [Any]:
            var converted: [ConfigurationValue] = []
            for value in values {
                guard let value = ConfigurationValue(value) else { return nil }
                converted.append(value)
            }
            self = .array(converted)
        case let values as [String: Any]:
            var converted: [String: ConfigurationValue] = [:]
            for (key, value) in values {
                guard let value = ConfigurationValue(value) else { return nil }
                converted[key] = value
            }
            self = .dictionary(converted)
        default:
            return nil
        }
    }

    /// What Foundation's parsers return, decoded: `NSNumber`s told apart by their type (a JSON `1` is not a
    /// boolean, a `true` is), dates and data refused. `path` names the place for the error.
    static func decode(_ object: Any, path: String, file: String) throws(ConfigurationError) -> ConfigurationValue {
        if type(of: object) == Bool.self, let value = object as? Bool { return .bool(value) }
        if let number = object as? NSNumber, !(object is String) {
            let type = String(cString: number.objCType)
            if type == "c" || type == "B" || String(describing: Swift.type(of: object)).contains("Boolean") {
                return .bool(number.boolValue)
            }
            if type == "d" || type == "f" { return .double(number.doubleValue) }
            return .int(number.intValue)
        }
        if let string = object as? String { return .string(string) }
        if let array = object as? [Any] {
            var values: [ConfigurationValue] = []
            values.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                values.append(try decode(element, path: "\(path)[\(index)]", file: file))
            }
            return .array(values)
        }
        if let dictionary = object as? [AnyHashable: Any] {
            var values: [String: ConfigurationValue] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String else {
                    throw ConfigurationError(.malformed, file: file, path: path, detail: "a dictionary key is not a string")
                }
                values[key] = try decode(element, path: path.isEmpty ? key : "\(path).\(key)", file: file)
            }
            return .dictionary(values)
        }
        throw ConfigurationError(
            .malformed, file: file, path: path,
            detail: "a value of type \(type(of: object)) (dates and data are not supported; use a string)")
    }
}
