/// A disposal hook that threw.
public struct DisposalFailure: Error, Sendable, CustomStringConvertible {
    /// The registration whose instance failed to dispose.
    public let service: ServiceKey
    /// The error the hook threw.
    public let error: any Error

    public var description: String {
        "Disposing \(service.description) threw: \(error). The other instances were still disposed."
    }
}
