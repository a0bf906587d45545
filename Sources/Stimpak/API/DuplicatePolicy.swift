/// What `register` does when a registration with the same service type, arguments type and key exists.
///
/// `.skip` and `.replace` never fail, so `register` needs no `try` with them; `.throw` makes `register`
/// throw a ``RegistrationError``.
public struct DuplicatePolicy<Failure: Error>: Sendable {
    /// Returns true to replace the existing registration, false to keep it, or throws.
    let resolveConflict: @Sendable (ServiceKey) throws(Failure) -> Bool
}

extension DuplicatePolicy where Failure == Never {
    /// Keep the existing registration; the new one is not added. The default.
    public static var skip: Self { Self { _ in false } }

    /// Replace the existing registration. Instances it already cached stay where they are until their
    /// cache is disposed.
    public static var replace: Self { Self { _ in true } }
}

extension DuplicatePolicy where Failure == RegistrationError {
    /// Throw a ``RegistrationError`` and keep the existing registration.
    public static var `throw`: Self { Self { key throws(RegistrationError) in throw RegistrationError(.alreadyRegistered, key: key) } }
}
