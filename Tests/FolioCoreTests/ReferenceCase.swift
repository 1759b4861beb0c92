/// A sequence to run: the first `length` steps of `seed`'s random sequence, or only the steps `kept` of them (a
/// minimal failing sequence, as shrinking printed it), or steps written out.
struct ReferenceCase: CustomStringConvertible {
    /// The seed of the random sequence (`nil`: the steps are written out).
    var seed: UInt64?
    /// How many steps the random sequence has.
    var length: Int
    /// The indices of the steps run (`nil`: all).
    var kept: [Int]?
    /// The steps written out.
    var steps: [ReferenceOperation]?

    /// The first `length` steps of `seed`'s sequence, or those of them `kept`.
    init(seed: UInt64, length: Int, kept: [Int]? = nil) {
        self.seed = seed
        self.length = length
        self.kept = kept
    }

    /// These steps.
    init(steps: [ReferenceOperation]) {
        self.steps = steps
        length = steps.count
    }

    /// The steps to run.
    var operations: [ReferenceOperation] {
        guard let seed else { return steps ?? [] }
        let all = ReferenceOperation.sequence(seed: seed, count: length)
        return kept.map { $0.map { all[$0] } } ?? all
    }

    /// The case made of the steps `indices` (of ``operations``) of this one.
    func keeping(_ indices: [Int]) -> ReferenceCase {
        guard let seed else { return ReferenceCase(steps: indices.map { operations[$0] }) }
        let base = kept ?? Array(0..<length)
        return ReferenceCase(seed: seed, length: length, kept: indices.map { base[$0] })
    }

    var description: String {
        guard let seed else {
            return "ReferenceCase(steps: [\(operations.map(\.description).joined(separator: ", "))])"
        }
        return "ReferenceCase(seed: \(seed), length: \(length)\(kept.map { ", kept: \($0)" } ?? ""))"
    }
}
