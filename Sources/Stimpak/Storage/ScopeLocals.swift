/// What a scope adds under service keys (``Scope/locals``): the values put there with `provide` and the
/// registrations made there, guarded by the container's lock.
///
/// A request's scope holds a few (its `Request`, an id, a logger), so they are kept in a small array and
/// found by comparing keys, which costs a key's `==` (two identities and an interned key's box): a
/// dictionary would hash each key, and its storage, of a type the standard library does not specialize, is
/// allocated through a generic metadata lookup on every scope's first `provide`. Past ``smallLimit`` keys
/// they move to a dictionary, so that a scope of many registrations (a module of fakes installed in a test's
/// scope) is searched in constant time. A scope without any allocates nothing for them.
struct ScopeLocals: Sequence {
    typealias Element = (key: ServiceKey, value: Local)

    /// How many keys the array holds before they move to the dictionary.
    static let smallLimit = 8

    /// An element of the array: a struct, whose copies and destruction are compiled, where a tuple's go
    /// through the runtime's generic tuple witnesses.
    fileprivate struct Pair {
        let key: ServiceKey
        var value: Local
    }

    private enum Storage {
        case none
        case small([Pair])
        case large([ServiceKey: Local])
    }

    private var storage = Storage.none

    var isEmpty: Bool {
        switch storage {
        case .none: return true
        case .small(let pairs): return pairs.isEmpty
        case .large(let dictionary): return dictionary.isEmpty
        }
    }

    subscript(key: ServiceKey) -> Local? {
        get {
            switch storage {
            case .none: return nil
            case .small(let pairs): return Self.position(of: key, in: pairs).map { pairs[$0].value }
            case .large(let dictionary): return dictionary[key]
            }
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the value of `key`, and returns the one it replaces, if any.
    @discardableResult
    mutating func updateValue(_ value: Local, forKey key: ServiceKey) -> Local? {
        switch storage {
        case .none:
            // Room for a request's few values at once.
            var pairs: [Pair] = []
            pairs.reserveCapacity(4)
            pairs.append(Pair(key: key, value: value))
            storage = .small(pairs)
            return nil
        case .small(var pairs):
            storage = .none  // `pairs` is then the array's only reference: changed in place
            if let position = Self.position(of: key, in: pairs) {
                let replaced = pairs[position].value
                pairs[position].value = value
                storage = .small(pairs)
                return replaced
            }
            guard pairs.count >= Self.smallLimit else {
                pairs.append(Pair(key: key, value: value))
                storage = .small(pairs)
                return nil
            }
            var dictionary = [ServiceKey: Local](minimumCapacity: Self.smallLimit * 2)
            for pair in pairs { dictionary[pair.key] = pair.value }
            dictionary[key] = value
            storage = .large(dictionary)
            return nil
        case .large(var dictionary):
            storage = .none
            defer { storage = .large(dictionary) }
            return dictionary.updateValue(value, forKey: key)
        }
    }

    /// Removes `key`'s value, and returns it, if any.
    @discardableResult
    mutating func removeValue(forKey key: ServiceKey) -> Local? {
        switch storage {
        case .none:
            return nil
        case .small(var pairs):
            guard let position = Self.position(of: key, in: pairs) else { return nil }
            storage = .none
            let removed = pairs.remove(at: position).value
            storage = .small(pairs)
            return removed
        case .large(var dictionary):
            storage = .none
            defer { storage = .large(dictionary) }
            return dictionary.removeValue(forKey: key)
        }
    }

    /// Where `key` is in `pairs`.
    private static func position(of key: ServiceKey, in pairs: [Pair]) -> Int? {
        var position = 0
        while position < pairs.count {
            if pairs[position].key == key { return position }
            position += 1
        }
        return nil
    }

    func makeIterator() -> Iterator {
        switch storage {
        case .none: return Iterator(small: [].makeIterator(), large: nil)
        case .small(let pairs): return Iterator(small: pairs.makeIterator(), large: nil)
        case .large(let dictionary): return Iterator(small: [].makeIterator(), large: dictionary.makeIterator())
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate var small: IndexingIterator<[Pair]>
        fileprivate var large: Dictionary<ServiceKey, Local>.Iterator?

        mutating func next() -> Element? {
            guard large != nil else { return small.next().map { ($0.key, $0.value) } }
            return large!.next().map { ($0.key, $0.value) }
        }
    }
}
