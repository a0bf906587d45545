extension DisposalRecord {
    /// The record for a new cached instance, or nil when it has neither an `onDispose` hook nor is
    /// `Disposable` or ``AsyncDisposable``, nor has `layers` (a decorated instance's, see
    /// ``Scope/decorate(_:of:with:in:layers:)``). Nil at once, with one word compared, for an undecorated instance
    /// of the type its registration last found to be neither (see
    /// ``ServiceRegistration/needsNoDisposalRecord(_:onDispose:)``): making the record only to find that out
    /// copies the instance and destroys an optional through metadata.
    @inline(__always)
    static func of<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>, slot: Slot?, onDispose: DisposeHook<Service>?,
        layers: [InstanceDisposal]? = nil
    ) -> DisposalRecord? {
        guard let layers, !layers.isEmpty else {
            return resolver.needsNoDisposalRecord(instance, onDispose: onDispose)
                ? nil : DisposalRecord(for: instance, of: resolver, slot: slot, onDispose: onDispose)
        }
        // The layers are disposed after the instance's own record, unless that replaces or skips disposal.
        let record = DisposalRecord(for: instance, of: resolver, slot: slot, onDispose: onDispose)
        guard resolver.disposesInstances, !(onDispose?.replacesDispose ?? false) else { return record }
        return DisposalRecord(key: resolver.serviceKey, slot: slot, disposing: record, then: layers)
    }

    private init?<Service, Args>(
        for instance: Service, of resolver: ServiceResolver<Service, Args>, slot: Slot?,
        onDispose: DisposeHook<Service>?
    ) {
        // The instance's own disposal, unless a hook replaces it or the container did not make it.
        var replaced = !resolver.disposesInstances
        switch onDispose {
        case .sync(_, let replaces)?, .async(_, let replaces)?: replaced = replaced || replaces
        case nil: break
        }
        // `let`s, not `var`s: the hooks capture them, and a captured `var` is a heap box per creation.
        let disposal = replaced ? .none : resolver.disposal(of: instance)
        let disposable: (any Disposable)?
        let asyncDisposable: (any AsyncDisposable)?
        switch disposal {
        case .none: (disposable, asyncDisposable) = (nil, nil)
        case .sync(let found): (disposable, asyncDisposable) = (found, nil)
        case .async(let found): (disposable, asyncDisposable) = (nil, found)
        }
        switch onDispose {
        case .sync(let hook, _)? where asyncDisposable == nil:
            self.init(
                key: resolver.serviceKey, slot: slot,
                dispose: {
                    // The hook first, then the instance's own dispose(), which runs even when the hook throws.
                    var errors = DisposalErrors()
                    do { try hook(instance) } catch { errors.append(error) }
                    do { try disposable?.dispose() } catch { errors.append(error) }
                    try errors.throwIfAny()
                })
        case .sync(let hook, _)?:
            self.init(
                key: resolver.serviceKey, slot: slot,
                disposeAsync: {
                    var errors = DisposalErrors()
                    do { try hook(instance) } catch { errors.append(error) }
                    do { try await asyncDisposable?.dispose() } catch { errors.append(error) }
                    try errors.throwIfAny()
                })
        case .async(let hook, _)?:
            self.init(
                key: resolver.serviceKey, slot: slot,
                disposeAsync: {
                    var errors = DisposalErrors()
                    do { try await hook(instance) } catch { errors.append(error) }
                    do { try disposable?.dispose() } catch { errors.append(error) }
                    do { try await asyncDisposable?.dispose() } catch { errors.append(error) }
                    try errors.throwIfAny()
                })
        case nil:
            if let disposable {
                self.init(key: resolver.serviceKey, slot: slot, disposing: disposable)
            } else if let asyncDisposable {
                self.init(key: resolver.serviceKey, slot: slot, disposing: asyncDisposable)
            } else {
                return nil
            }
        }
    }
}
