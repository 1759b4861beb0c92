import FolioCore

/// The creates of one ``LocalProvider/createItems(_:)`` call on their way: each gets an outcome once it fails
/// or is answered, and holds a staged file while its content waits to be put into place.
struct CreateBatch {
    /// The creates asked for, in order.
    let creations: [ItemCreation]
    /// Each create's outcome, once it has one.
    private(set) var outcomes: [Result<RemoteItem, FolioError>?]
    /// Each new file's staged content, until ``discardStaged()``.
    private(set) var staged: [StagedUpload?]
    /// Whether each staged file was put into place.
    private var placed: [Bool]

    /// A batch of `creations`, none answered yet.
    init(_ creations: [ItemCreation]) {
        self.creations = creations
        outcomes = Array(repeating: nil, count: creations.count)
        staged = Array(repeating: nil, count: creations.count)
        placed = Array(repeating: false, count: creations.count)
    }

    /// The creates without an outcome yet.
    var open: [Int] { creations.indices.filter { outcomes[$0] == nil } }

    /// Whether any create has no outcome yet.
    var hasOpenCreates: Bool { outcomes.contains { $0 == nil } }

    /// Whether any staged content is flushed with the other uploads (rather than on its own).
    var hasSmallStagedContent: Bool { staged.contains { $0?.isSmall == true } }

    /// Whether any create answered so far has its name flushed with the other uploads before the answer (all
    /// but big files, which were `fsync`ed on their own; also a retry's, which an earlier attempt made).
    var hasNamesToFlush: Bool {
        creations.indices.contains { index in
            guard case .success = outcomes[index] else { return false }
            return staged[index]?.isSmall ?? true
        }
    }

    /// Keeps `upload` as create `index`'s staged content.
    mutating func stage(_ index: Int, _ upload: StagedUpload) {
        staged[index] = upload
    }

    /// Create `index` failed with `error`.
    mutating func fail(_ index: Int, _ error: any Error) {
        outcomes[index] = .failure(FolioError(error))
    }

    /// Every create without an outcome failed with `error` (a flush of their contents failed).
    mutating func failOpen(_ error: any Error) {
        for index in open { fail(index, error) }
    }

    /// Every create made so far is uncertain after all (the flush of their names failed): `error` for them.
    mutating func failAnswered(_ error: any Error) {
        for index in creations.indices where (try? outcomes[index]?.get()) != nil { fail(index, error) }
    }

    /// Create `index` is answered with `item`; `placed` says whether its staged file was put into place.
    mutating func answer(_ index: Int, _ item: RemoteItem, placed: Bool) {
        outcomes[index] = .success(item)
        self.placed[index] = placed
    }

    /// Closes every staged file, removing those that were not put into place.
    mutating func discardStaged() {
        for index in staged.indices {
            staged[index]?.discard(placed: placed[index])
        }
    }

    /// The answers, in order: `error` for all if given (the reply was lost: the caller learns nothing).
    func results(lostWith error: (any Error)? = nil) -> [Result<RemoteItem, FolioError>] {
        outcomes.map { outcome in
            if let error { return .failure(FolioError(error)) }
            return outcome ?? .failure(.providerFailure("create not answered", retryable: true))
        }
    }
}
