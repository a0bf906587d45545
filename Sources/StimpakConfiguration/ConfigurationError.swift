/// Why a definition file, or a service made from one, could not be used: the file, the key path and what to do.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added without breaking the API.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String

        /// Not a property list or JSON document, or too large or too deeply nested to read safely.
        public static let unreadable = Code(name: "unreadable")
        /// A document whose structure is not a definition file's (`arguments` not an array…).
        public static let malformed = Code(name: "malformed")
        /// A service's `class` names a type the program did not declare.
        public static let unknownType = Code(name: "unknownType")
        /// An `@name` argument refers to no parameter and no service.
        public static let unknownReference = Code(name: "unknownReference")
        /// Services refer to each other in a loop.
        public static let referenceCycle = Code(name: "referenceCycle")
        /// A parameter is used where a service is expected, or the reverse.
        public static let wrongKind = Code(name: "wrongKind")
        /// An argument, or a parameter, is not of the type asked for.
        public static let wrongType = Code(name: "wrongType")
        /// An extension of a service returned an instance that is not of the type the service is registered as.
        public static let wrongInstanceType = Code(name: "wrongInstanceType")
        /// An argument asked for at a position the definition does not have.
        public static let missingArgument = Code(name: "missingArgument")
        /// A definition gives a number of arguments its type does not take (``DefinedService/argumentCounts``).
        public static let wrongArgumentCount = Code(name: "wrongArgumentCount")
        /// A name is both a parameter and a service.
        public static let duplicateName = Code(name: "duplicateName")
        /// `%env(NAME)%` names an environment variable that is not set.
        public static let missingEnvironmentVariable = Code(name: "missingEnvironmentVariable")
        /// `get` of a name nothing defines.
        public static let unknownName = Code(name: "unknownName")

        public var description: String { name }
    }

    public let code: Code
    /// The file (its name, as given to `load`), or the provider, the definition came from.
    public let file: String
    /// The key path in it: `services.dose.service2.arguments[1]`.
    public let path: String
    /// What is wrong, in words.
    public let detail: String

    init(_ code: Code, file: String, path: String, detail: String) {
        self.code = code
        self.file = file
        self.path = path
        self.detail = detail
    }

    /// An extension of `name` returned `instance`, which is not a `registered`.
    static func wrongInstance(of name: String, returned instance: Any, registeredAs registered: Any.Type) -> ConfigurationError {
        ConfigurationError(
            .wrongInstanceType, file: "", path: "services.\(name)",
            detail: "\(name) is registered as \(registered), but an extension of it returned a \(Swift.type(of: instance))")
    }

    public var description: String {
        var text = "Stimpak cannot use \(file.isEmpty ? "the definitions" : file)"
        if !path.isEmpty { text += " at \(path)" }
        text += ": \(detail)."
        text += " Fix: \(fix)"
        return text
    }

    private var fix: String {
        switch code {
        case .unreadable: return "give an XML property list or a JSON document (at most 4 MB, nested at most 64 levels)."
        case .malformed:
            return "the file holds a `parameters` dictionary and a `services` dictionary of name → { class, arguments (an array) }."
        case .unknownType: return "declare the type in the ServiceTypes given to Definitions, or correct the class name."
        case .unknownReference: return "define that parameter or service, or install the provider that does; write @@ for a literal @."
        case .referenceCycle: return "break the loop: one of these services must not take the other as an argument."
        case .wrongKind: return "refer to a service where the definition asks for one, and to a parameter where it asks for a value."
        case .wrongType: return "give the argument the type the service's declaration reads, or read it as the file's type."
        case .wrongInstanceType:
            return "return an instance of the registered type from every extension of the service (extend it as that type), or declare the service as a type they all conform to."
        case .missingArgument:
            return "add the argument to the definition's `arguments`; a type that declares the counts it takes (argumentCounts) has them checked when the file loads."
        case .wrongArgumentCount:
            return "give the definition as many arguments as the type takes, or declare the counts it takes (argumentCounts)."
        case .duplicateName: return "give the parameter and the service different names."
        case .missingEnvironmentVariable: return "set the variable, or give a default: %env(NAME:-default)%."
        case .unknownName: return "load a file or install a provider that defines it; `names` lists what is defined."
        default: return "correct the definition."
        }
    }
}
