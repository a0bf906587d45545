/// The cycles of a directed graph, found in one depth-first pass without recursion: what the container's
/// validation and the definition files' validation both look for.
package enum CycleSearch {
    /// Every cycle of the graph whose node `n` has edges to the nodes `edges[n]` (distinct, in the order they
    /// are followed): one for each edge that leads back to a node whose edges are still being followed, as
    /// the nodes of the path from that node round to it again (the first node is repeated at the end).
    ///
    /// Nodes are started from in order and edges followed in order, with the path kept in an array rather
    /// than on the call stack: each node and each edge is visited once, whatever the length of a chain.
    package static func cycles(edges: [[Int]]) -> [[Int]] {
        enum Colour { case unvisited, onPath, finished }
        var colours = [Colour](repeating: .unvisited, count: edges.count)
        // Where each node on the path stands in it, for cutting a cycle out of the path.
        var positions = [Int](repeating: 0, count: edges.count)
        // The nodes whose edges are being followed, each with the index of its next edge.
        var path: [(node: Int, next: Int)] = []
        var cycles: [[Int]] = []
        for start in edges.indices where colours[start] == .unvisited {
            colours[start] = .onPath
            positions[start] = 0
            path.append((start, 0))
            while let (node, next) = path.last {
                guard next < edges[node].count else {
                    colours[node] = .finished
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let target = edges[node][next]
                switch colours[target] {
                case .unvisited:
                    colours[target] = .onPath
                    positions[target] = path.count
                    path.append((target, 0))
                case .onPath:
                    cycles.append(path[positions[target]...].map(\.node) + [target])
                case .finished:
                    break
                }
            }
        }
        return cycles
    }
}
