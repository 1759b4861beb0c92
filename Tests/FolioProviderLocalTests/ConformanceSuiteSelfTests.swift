import FolioCore
import FolioProviderLocal
import FolioTesting
import Foundation
import SystemPackage
import XCTest

/// The conformance suite must catch a provider that breaks its rules: each fault below, injected into a
/// working local provider, makes the matching check fail.
final class ConformanceSuiteSelfTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    func testCatchesAProviderThatOverwritesRemoteChanges() async throws {
        try await assertFails(.staleModifyConflicts, with: .overwritesOnConflict)
    }

    func testCatchesAProviderThatDuplicatesRetriedCreates() async throws {
        try await assertFails(.createIsIdempotent, with: .duplicatesRetriedCreates)
    }

    func testCatchesAProviderThatDuplicatesRetriedCreatesOfABatch() async throws {
        try await assertFails(.createManyAtOnce, with: .duplicatesRetriedCreates)
    }

    func testCatchesAProviderThatGivesUpABatchAtItsFirstFailure() async throws {
        try await assertFails(.createManyAtOnce, with: .abandonsBatchAtFirstFailure)
    }

    func testCatchesAProviderThatIgnoresRetryTags() async throws {
        try await assertFails(.retryTagsRecognizeOwnWrites, with: .ignoresRetryTags)
    }

    func testCatchesAProviderThatShortensLongNames() async throws {
        try await assertFails(.badNamesAreRefused, with: .shortensLongNames)
    }

    func testCatchesAProviderThatReportsNoProgress() async throws {
        try await assertFails(.fetchReturnsExactBytes, with: .reportsNoProgress)
    }

    func testCatchesAProviderThatIgnoresThePageSize() async throws {
        try await assertFails(.enumerationPages, with: .ignoresPageSize)
    }

    func testCatchesAProviderThatLosesItsPlaceBetweenPages() async throws {
        try await assertFails(.changeDuringPagedEnumeration, with: .pagesByPosition)
    }

    func testCatchesAProviderThatGivesAnOldVersionsThumbnailForANewOne() async throws {
        try await assertFails(.descriptionsPerVersion, with: .thumbnailsOfAnyVersion)
    }

    func testCatchesAProviderThatAnswersChangesWithEverything() async throws {
        try await assertFails(.changesCostInProportion, with: .answersChangesWithEverything)
    }

    func testCatchesAProviderThatAcceptsAnyAnchor() async throws {
        try await assertFails(.expiredAnchors, with: .acceptsAnyAnchor)
    }

    func testCatchesAProviderWhoseAnchorsDoNotSurviveARestart() async throws {
        try await assertFails(.anchorsAcrossRestarts, with: .anchorsInMemory)
    }

    /// Runs `check` against a provider with `fault` and expects it to fail.
    private func assertFails(_ check: ProviderConformance.Check, with fault: FaultyProvider.Fault) async throws {
        let root = remote.root
        let suite = ProviderConformance(
            options: ProviderConformance.Options(
                expireAnchors: { try LocalProvider(root: root).expireAnchors(in: $0) }),
            makeProvider: { FaultyProvider(try LocalProvider(root: root), fault: fault) })
        do {
            let outcome = try await suite.run(check)
            XCTFail("\(check) did not notice \(fault): \(outcome)")
        } catch let failure as ConformanceFailure {
            XCTAssertEqual(failure.check, check.rawValue, "\(failure)")
        }
    }
}

/// A local provider with one rule broken on purpose.
private struct FaultyProvider: Provider {
    /// The rule to break.
    enum Fault: Sendable {
        case overwritesOnConflict, duplicatesRetriedCreates, shortensLongNames, reportsNoProgress, ignoresRetryTags
        case abandonsBatchAtFirstFailure, ignoresPageSize, pagesByPosition, answersChangesWithEverything
        case acceptsAnyAnchor, anchorsInMemory, thumbnailsOfAnyVersion
    }

    let base: LocalProvider
    let fault: Fault

    /// A tag that makes this instance's anchors its own (``Fault/anchorsInMemory``).
    let instance = UUID().uuidString

    init(_ base: LocalProvider, fault: Fault) {
        self.base = base
        self.fault = fault
    }

    func listContainers() async throws -> [Container] { try await base.listContainers() }

    func currentAnchor(in container: ContainerID) async throws -> SyncAnchor {
        let anchor = try await base.currentAnchor(in: container)
        return fault == .anchorsInMemory ? SyncAnchor(instance + "|" + anchor.rawValue) : anchor
    }

    func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        switch fault {
        case .ignoresPageSize:
            guard cursor == nil else { return FolderPage(items: [], next: nil) }
            return FolderPage(items: try await base.enumerateWholeFolder(folder, in: container), next: nil)
        case .pagesByPosition:
            // The cursor is a position among the children now: a change between pages shifts them.
            let all = try await base.enumerateWholeFolder(folder, in: container)
            let start = min(Int(cursor?.rawValue ?? "0") ?? 0, all.count)
            let end = min(start + pageSize, all.count)
            return FolderPage(items: Array(all[start..<end]), next: end < all.count ? PageCursor("\(end)") : nil)
        default:
            return try await base.enumerateFolder(folder, in: container, from: cursor, pageSize: pageSize)
        }
    }

    func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem {
        try await base.item(id, in: container)
    }

    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        var reported = progress
        if fault == .reportsNoProgress { reported = { _ in } }
        return try await base.fetchContents(
            of: id, in: container, version: version, range: range, to: destination, progress: reported)
    }

    func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        switch fault {
        case .answersChangesWithEverything:
            let (items, now) = try await base.enumerateItems(in: container)
            return RemoteChanges(updated: items, deleted: [], anchor: now, isFullEnumeration: true)
        case .acceptsAnyAnchor:
            do {
                return try await base.changes(in: container, since: anchor)
            } catch FolioError.anchorExpired {
                return RemoteChanges(updated: [], deleted: [], anchor: try await base.currentAnchor(in: container))
            }
        case .anchorsInMemory:
            let prefix = instance + "|"
            guard anchor.rawValue.hasPrefix(prefix) else {
                throw FolioError.anchorExpired("not an anchor of this instance")
            }
            let original = SyncAnchor(String(anchor.rawValue.dropFirst(prefix.count)))
            var changes = try await base.changes(in: container, since: original)
            changes.anchor = SyncAnchor(prefix + changes.anchor.rawValue)
            return changes
        default:
            return try await base.changes(in: container, since: anchor)
        }
    }

    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        var reported = progress
        if fault == .reportsNoProgress { reported = { _ in } }
        return try await base.fetchContents(
            of: id, in: container, version: version, to: destination, progress: reported
        )
    }

    func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        var template = template
        if fault == .duplicatesRetriedCreates {
            template.id = .generate()
            let taken = try await base.enumerateItems(in: template.container).items.contains {
                $0.parentID == template.parentID && $0.name == template.name
            }
            if taken { template.name += " 2" }
        }
        if fault == .ignoresRetryTags { template.retryTag = nil }
        if fault == .shortensLongNames && template.name.utf8.count > 255 {
            template.name = String(template.name.prefix(100))
        }
        return try await base.createItem(template, contents: contents)
    }

    /// One create after another (with the faults above); with `.abandonsBatchAtFirstFailure`, the creates after
    /// a failed one fail too, unmade.
    func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>] {
        var outcomes: [Result<RemoteItem, FolioError>] = []
        for creation in creations {
            if fault == .abandonsBatchAtFirstFailure, case .failure(let error)? = outcomes.last {
                outcomes.append(.failure(error))
                continue
            }
            do {
                outcomes.append(.success(try await createItem(creation.template, contents: creation.contents)))
            } catch {
                outcomes.append(.failure(FolioError(error)))
            }
        }
        return outcomes
    }

    func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        var baseVersion = baseVersion
        var changes = changes
        if fault == .ignoresRetryTags { changes.retryTag = nil }
        if fault == .overwritesOnConflict,
            let current = try await base.enumerateItems(in: container).items.first(where: { $0.id == id })
        {
            baseVersion = current.version
        }
        return try await base.modifyItem(
            id, in: container, baseVersion: baseVersion, changes: changes, contents: contents
        )
    }

    func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws {
        try await base.storeDescription(description, thumbnails: thumbnails, of: id, in: container)
    }

    func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription] {
        try await base.descriptions(of: ids, in: container)
    }

    func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]? {
        guard fault == .thumbnailsOfAnyVersion else {
            return try await base.thumbnail(of: id, in: container, version: version, size: size)
        }
        // Whatever version is asked for, the last one described.
        guard let kept = try await base.descriptions(of: [id], in: container)[id] else { return nil }
        return try await base.thumbnail(of: id, in: container, version: kept.version, size: size)
    }

    func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws {
        try await base.deleteItem(id, in: container, baseVersion: baseVersion, retryTag: retryTag)
    }
}
