import Synchronization

/// The answers of the creates of one ``Provider/createItems(_:)`` call, each put in its own place by the task
/// that made it; a place no task filled reads as interrupted (retried).
final class CreateAnswers: Sendable {
    private let answers: Mutex<[Result<RemoteItem, FolioError>]>

    /// A table of `count` places, each interrupted until it is set.
    init(count: Int) {
        answers = Mutex(Array(repeating: .failure(.interrupted("create")), count: count))
    }

    /// Puts the answer of the create at `index`.
    func set(_ index: Int, _ answer: Result<RemoteItem, FolioError>) {
        answers.withLock { $0[index] = answer }
    }

    /// Every answer, in the order of the creates.
    var all: [Result<RemoteItem, FolioError>] { answers.withLock { $0 } }
}
