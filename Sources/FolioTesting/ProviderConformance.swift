import FolioCore

/// The conformance suite every provider runs (one suite, many backends): what Folio's sync engine relies on,
/// checked against a real provider. Each check works in its own uniquely named folder, so the remote need not
/// be empty and checks do not see each other's items; a passing check deletes what it made (a failing one
/// leaves its items on the remote, to look at).
///
/// Run everything with ``runAll()``, or one check with ``run(_:)`` (one test method per ``Check`` gives the
/// clearest reports). A failure is a ``ConformanceFailure`` saying what was expected and what happened.
public struct ProviderConformance: Sendable {
    /// Makes a provider over the remote under test. Called once per check; every provider it makes must see
    /// the same remote.
    public typealias ProviderFactory = @Sendable () async throws -> any Provider
    /// Starts another process with a provider over the same remote (see ``ProviderRival``).
    public typealias RivalFactory = @Sendable () throws -> ProviderRival

    /// What the provider under test supports, and where the suite may work.
    public struct Options: Sendable {
        /// The container the checks work in.
        public var container: ContainerID
        /// A second container of the same remote, for moves across containers (`nil` skips that check).
        public var secondContainer: ContainerID?
        /// Whether the provider stores symlinks.
        public var supportsSymlinks: Bool
        /// Whether the provider keeps the modification time it is given (to the nanosecond).
        public var preservesModificationTime: Bool
        /// Whether the provider keeps permission bits.
        public var preservesMode: Bool
        /// Names this provider cannot store besides the universal ones (over 255 bytes, `/`, NUL, `.`, `..`,
        /// empty); creating them must fail with `.invalidArgument`.
        public var extraInvalidNames: [String]
        /// Expires every anchor of a container (as trimming its change history would), for the expired-anchor
        /// check (`nil`: only garbage anchors are checked).
        public var expireAnchors: (@Sendable (ContainerID) async throws -> Void)?
        /// Rounds of two processes racing with two modifies of one version (a quarter as many of each other
        /// race: delete against modify, two creates of one name, two renames to one name).
        public var raceRounds: Int
        /// Whether the provider keeps descriptions of content (``Provider/storeDescription(_:thumbnails:of:in:)``).
        public var keepsDescriptions: Bool
        /// Whether the provider keeps items' tags (``RemoteItem/tags``, ``RemoteItemChanges/tags``).
        public var keepsTags: Bool

        /// Options for a provider; the defaults expect everything a local file system offers.
        public init(
            container: ContainerID = .drive, secondContainer: ContainerID? = nil, supportsSymlinks: Bool = true,
            preservesModificationTime: Bool = true, preservesMode: Bool = true, extraInvalidNames: [String] = [],
            raceRounds: Int = 200, expireAnchors: (@Sendable (ContainerID) async throws -> Void)? = nil,
            keepsDescriptions: Bool = true, keepsTags: Bool = true
        ) {
            self.keepsTags = keepsTags
            self.keepsDescriptions = keepsDescriptions
            self.expireAnchors = expireAnchors
            self.raceRounds = raceRounds
            self.container = container
            self.secondContainer = secondContainer
            self.supportsSymlinks = supportsSymlinks
            self.preservesModificationTime = preservesModificationTime
            self.preservesMode = preservesMode
            self.extraInvalidNames = extraInvalidNames
        }
    }

    /// The checks of the suite.
    public enum Check: String, CaseIterable, Sendable {
        /// Files, folders and symlinks are created as asked and enumerated with the same ids and metadata.
        case createAndEnumerate
        /// Ids survive renames and moves (folders bring their children); a taken name is `.exists`.
        case idsStableAcrossRenameAndMove
        /// Ids survive a move to another container.
        case idsStableAcrossContainers
        /// A fetch returns the exact bytes and reports progress up to the size.
        case fetchReturnsExactBytes
        /// A fetch of another version is `.conflict`; of an unknown id `.notFound`.
        case fetchChecksVersionAndExistence
        /// A content change based on a stale version is `.conflict` and changes nothing; every content change
        /// gives a new version, even one keeping size and modification time; metadata changes never conflict,
        /// and one made on a stale base says so (``RemoteItem/changedElsewhere``).
        case staleModifyConflicts
        /// A create retried with the same id returns the same item, never a duplicate.
        case createIsIdempotent
        /// Many creates in one call are each answered, in order, as one create alone would be: the others are
        /// made when one fails, and retrying the whole call duplicates nothing.
        case createManyAtOnce
        /// A retry tag lets its writer change or delete the version its own earlier attempt made (the answer
        /// was lost), with new content also through a retried create; another writer's tag, or a version
        /// changed since by anyone else, is still `.conflict`.
        case retryTagsRecognizeOwnWrites
        /// Deleting twice succeeds; deleting a changed item is `.conflict`.
        case deleteIsIdempotent
        /// Deleting a folder with children is `.notEmpty`.
        case deleteNonEmptyFolderFails
        /// Names the provider cannot store are refused (`.nameTooLong`, `.invalidArgument`), creating nothing.
        case badNamesAreRefused
        /// A cancelled fetch stops with `.interrupted` (needs a slow provider).
        case fetchCancellation
        /// A ranged fetch writes the range's bytes at their offsets and nothing else, cuts a range past the end,
        /// reports progress within the range, and is `.conflict` for another version (writing nothing).
        case rangedFetch
        /// Conditional operations (modify and delete at a base version, create and rename at a name) are
        /// atomic against a provider in another process: racing, exactly one wins, every round (needs a rival).
        case conditionalChangesAtomicAcrossProcesses
        /// A folder's children come in pages of the size asked (1, 2, 1000), each child exactly once, only the
        /// last page without a next cursor (and only it may be empty); a file is `.notDirectory`, a missing
        /// folder `.notFound`.
        case enumerationPages
        /// A create, delete and renames between two pages of a listing: unchanged children are listed once, and
        /// changes since an anchor taken before the first page report every one of them.
        case changeDuringPagedEnumeration
        /// An anchor keeps working across a restart (a new provider over the same remote), also for changes made
        /// by a provider in another process (with a rival).
        case anchorsAcrossRestarts
        /// A garbage anchor, and one the provider expired (with ``Options/expireAnchors``), are `.anchorExpired`;
        /// a fresh anchor works again.
        case expiredAnchors
        /// `item(_:in:)` gives an item's current metadata, also from a new provider, and `.notFound` once it is
        /// deleted or for an unknown id.
        case itemLookup
        /// Changes since an anchor report what changed and nothing of an unchanged folder: their cost follows
        /// the changes, not the size of the remote.
        case changesCostInProportion
        /// A description (type, thumbnails) is kept for the version it describes: given back by
        /// `descriptions(of:in:)` and `thumbnail(of:in:version:size:)`, one of a version the item is no longer at is
        /// dropped, a newer one replaces it (thumbnails too), and a deleted item keeps none (skipped where
        /// ``Options/keepsDescriptions`` is false).
        case descriptionsPerVersion
        /// Tags are kept with the item's metadata: an update (``TagUpdate``) is merged into the tags kept (a set
        /// union of what each writer added), changes no version and no content (also on a stale base, which the
        /// answer says), and is reported by `changes(in:since:)`, enumerations and lookups; a content change
        /// leaves the tags (skipped where ``Options/keepsTags`` is false).
        case tagsTravelWithMetadata
    }

    /// What running a check gave.
    public enum Outcome: Sendable, Equatable {
        /// The check passed.
        case passed
        /// The check could not run with these options; the reason says why.
        case skipped(String)
    }

    /// What the provider supports and where to work.
    public let options: Options
    /// Makes the provider under test.
    let makeProvider: ProviderFactory
    /// Makes a provider over the same remote that transfers content slowly enough to be cancelled midway.
    let makeSlowProvider: ProviderFactory?
    /// Starts a provider over the same remote in another process.
    let makeRival: RivalFactory?

    /// A suite for the providers `makeProvider` makes. `makeSlowProvider`, if given, makes providers over the
    /// same remote whose content transfers take at least a second or so for a few MiB (for the cancellation
    /// check, skipped without it). `makeRival`, if given, starts another process with a provider over the same
    /// remote (for the race across processes, skipped without it).
    public init(
        options: Options = Options(), makeProvider: @escaping ProviderFactory,
        makeSlowProvider: ProviderFactory? = nil, makeRival: RivalFactory? = nil
    ) {
        self.options = options
        self.makeProvider = makeProvider
        self.makeSlowProvider = makeSlowProvider
        self.makeRival = makeRival
    }

    /// Runs one check in a fresh workspace; throws a ``ConformanceFailure`` (or the provider's unexpected error)
    /// if the provider does not conform.
    @discardableResult
    public func run(_ check: Check) async throws -> Outcome {
        if let reason = skipReason(check) { return .skipped(reason) }
        let provider = try await makeProvider()
        let workspace = try await ConformanceWorkspace.make(
            check: check.rawValue, provider: provider, container: options.container
        )
        do {
            try await perform(check, in: workspace)
        } catch {
            workspace.removeScratch()  // the remote items stay, to look at
            throw error
        }
        await workspace.cleanUp()
        return .passed
    }

    /// Runs every check, all of them even after a failure, and throws one ``ConformanceFailure`` listing every
    /// failed check. Returns each check's outcome.
    @discardableResult
    public func runAll() async throws -> [Check: Outcome] {
        var outcomes: [Check: Outcome] = [:]
        var failures: [String] = []
        for check in Check.allCases {
            do {
                outcomes[check] = try await run(check)
            } catch {
                failures.append("\(check.rawValue): \(error)")
            }
        }
        if !failures.isEmpty {
            throw ConformanceFailure(
                check: "runAll", message: "\(failures.count) check(s) failed:\n" + failures.joined(separator: "\n")
            )
        }
        return outcomes
    }

    /// Why a check cannot run with these options, if it cannot.
    private func skipReason(_ check: Check) -> String? {
        switch check {
        case .idsStableAcrossContainers where options.secondContainer == nil:
            return "no second container given"
        case .fetchCancellation where makeSlowProvider == nil:
            return "no slow provider given"
        case .conditionalChangesAtomicAcrossProcesses where makeRival == nil:
            return "no rival process given"
        case .descriptionsPerVersion where !options.keepsDescriptions:
            return "the provider keeps no descriptions"
        case .tagsTravelWithMetadata where !options.keepsTags:
            return "the provider keeps no tags"
        default:
            return nil
        }
    }

    /// Runs the body of a check.
    private func perform(_ check: Check, in workspace: ConformanceWorkspace) async throws {
        switch check {
        case .createAndEnumerate: try await checkCreateAndEnumerate(workspace)
        case .idsStableAcrossRenameAndMove: try await checkIDsStableAcrossRenameAndMove(workspace)
        case .idsStableAcrossContainers: try await checkIDsStableAcrossContainers(workspace)
        case .fetchReturnsExactBytes: try await checkFetchReturnsExactBytes(workspace)
        case .fetchChecksVersionAndExistence: try await checkFetchChecksVersionAndExistence(workspace)
        case .staleModifyConflicts: try await checkStaleModifyConflicts(workspace)
        case .createIsIdempotent: try await checkCreateIsIdempotent(workspace)
        case .createManyAtOnce: try await checkCreateManyAtOnce(workspace)
        case .retryTagsRecognizeOwnWrites: try await checkRetryTagsRecognizeOwnWrites(workspace)
        case .deleteIsIdempotent: try await checkDeleteIsIdempotent(workspace)
        case .deleteNonEmptyFolderFails: try await checkDeleteNonEmptyFolderFails(workspace)
        case .badNamesAreRefused: try await checkBadNamesAreRefused(workspace)
        case .fetchCancellation: try await checkFetchCancellation(workspace)
        case .rangedFetch: try await checkRangedFetch(workspace)
        case .conditionalChangesAtomicAcrossProcesses:
            guard let makeRival else { return }
            let rival = try makeRival()
            defer { rival.stop() }
            try await checkConditionalChangesAtomicAcrossProcesses(workspace, rival: rival)
        case .enumerationPages: try await checkEnumerationPages(workspace)
        case .changeDuringPagedEnumeration: try await checkChangeDuringPagedEnumeration(workspace)
        case .anchorsAcrossRestarts: try await checkAnchorsAcrossRestarts(workspace)
        case .expiredAnchors: try await checkExpiredAnchors(workspace)
        case .itemLookup: try await checkItemLookup(workspace)
        case .changesCostInProportion: try await checkChangesCostInProportion(workspace)
        case .descriptionsPerVersion: try await checkDescriptionsPerVersion(workspace)
        case .tagsTravelWithMetadata: try await checkTagsTravelWithMetadata(workspace)
        }
    }
}
