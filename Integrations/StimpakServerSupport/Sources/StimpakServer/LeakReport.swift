/// What a testing helper's `requireNoLeaks()` found: request scopes left open, and instances alive after
/// their request scope was disposed.
public struct LeakReport: Error, CustomStringConvertible {
    /// The request scopes left open, by key.
    public let openScopes: [String]
    /// The instances alive after their request scope was disposed.
    public let survivors: [String]

    /// A report of `openScopes` and `survivors`.
    /// - Parameters:
    ///   - openScopes: The request scopes left open, by key.
    ///   - survivors: The instances alive after their request scope was disposed.
    public init(openScopes: [String], survivors: [String]) {
        self.openScopes = openScopes
        self.survivors = survivors
    }

    /// The open scopes and the survivors, a line each.
    public var description: String {
        var lines: [String] = []
        if !openScopes.isEmpty { lines.append("\(openScopes.count) request scopes left open: \(openScopes)") }
        if !survivors.isEmpty { lines.append("\(survivors.count) instances outlived their request scope: \(survivors)") }
        return lines.joined(separator: "\n")
    }
}
