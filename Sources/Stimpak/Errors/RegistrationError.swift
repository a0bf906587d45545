/// Why a registration was refused.
public struct RegistrationError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added without breaking the API.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: Hashable, Sendable {
            case alreadyRegistered
        }

        let base: Base

        /// A registration with the same service type, arguments type and key exists, and the call asked
        /// for `ifAlreadyRegistered: .throw`.
        public static let alreadyRegistered = Code(base: .alreadyRegistered)

        public var description: String { "alreadyRegistered" }
    }

    /// What went wrong.
    public let code: Code
    /// The registration's service type, arguments type and key.
    public let key: ServiceKey

    init(_ code: Code, key: ServiceKey) {
        self.code = code
        self.key = key
    }

    public var description: String {
        "Stimpak already has a registration for \(key.description). Fix: register with"
            + " ifAlreadyRegistered: .replace to replace it, unregister it first, or register under another key."
    }
}
