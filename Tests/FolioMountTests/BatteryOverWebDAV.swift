import XCTest

// Issue 15: the mount test battery over a WebDAV server. Each class below runs every test of an existing class over
// a private Apache `mod_dav` (``MountTestCase/remote``, ``MountFixture``) instead of the local provider; a test whose
// remote setup only the local provider has skips itself there (``MountTestCase/skipOverWebDAV(_:)``). `swift test`
// on Linux runs only the test methods a class declares, so each test is overridden with a call of the original:
// `scripts/generate-webdav-battery` writes them for the classes listed here:
//   ShellToolTests
//   PosixTests
//   PosixDetailsTests
//   EditorSaveMountTests
//   SparseFileTests
//   CoordinationTests
//   DurabilityTests
//   ConflictTests
//   PlaceholderTests
//   LargeContainerTests
//   PlaceholderBlocksTests
//   OnDemandContentTests
//   OnDemandListingTests
//   ContentManagementMountTests
//   ViewTests
//   CLITests
//   DiskFullTests
//   RemoteEventsTests
//   PolledRemoteChangesTests
//   TwoDeviceRaceTests
//   CrashBatteryTests
//   ThumbnailMountTests
//   TagsTravelTests
//   ContainerTests
//   BookmarkTests
//   DocumentModeTests
//
// Left out:
// - AdoptedFolderTests: adopting an existing folder of files is the local provider's.
// - CLISafetyTests: CLI refusals about remote folders and state folders; offline by the network simulation.
// - DescriptorLimitTests, SecurityTests, MountHelperTests: about the daemon, its sockets and mount(8), not the remote.
// - FailedUploadRetryTests: access denied by the remote folder's permissions (a daemon without DAC override).
// - FaultInjectionTests, LostReplyTests, OfflineTests, RangedReadTests: driven by the network simulation.
// - FolderTimeTests, FolderTimeTwoDeviceTests: compare the remote folders' own times and modes, which a server
//   keeps as Folio properties, not on its folders.
// - RemoteChangesTests: push (inotify on the remote folder) and that folder going away.
// - RemoteFullTests, RemoteReplacedTests: the remote folder on a small tmpfs, moved away.
// - UntrustedRemoteTests: symbolic links in the remote folder (MisbehavingServerTests has hostile servers).
// - WebDAVMountTests, WebDAVAccountTests, WebDAVTLSMountTests: over Apache already.

// BEGIN GENERATED (scripts/generate-webdav-battery)
/// ``ShellToolTests`` over Apache.
final class ShellToolTestsOverWebDAV: ShellToolTests {
    override class var remote: TestRemote { .apache }
    override func testCatCopyMoveRemove() throws { try super.testCatCopyMoveRemove() }
    override func testSedInPlaceAndEditorSaveKeepIdentity() throws {
        try super.testSedInPlaceAndEditorSaveKeepIdentity()
    }
    override func testTarExtractMatchesOriginal() throws { try super.testTarExtractMatchesOriginal() }
    override func testGitWorkflow() throws { try super.testGitWorkflow() }
    override func testPythonWrites() throws { try super.testPythonWrites() }
}

/// ``PosixTests`` over Apache.
final class PosixTestsOverWebDAV: PosixTests {
    override class var remote: TestRemote { .apache }
    override func testOpenHandlesSurviveUnlinkAndRenameOver() throws {
        try super.testOpenHandlesSurviveUnlinkAndRenameOver()
    }
    override func testRenameOverIsAtomicForReaders() throws { try super.testRenameOverIsAtomicForReaders() }
    override func testRefusedOperationsHaveClearErrors() throws { try super.testRefusedOperationsHaveClearErrors() }
    override func testFifoIsLocalOnly() throws { try super.testFifoIsLocalOnly() }
    override func testModesOwnersTimesAndPermissions() throws { try super.testModesOwnersTimesAndPermissions() }
    override func testExtendedAttributesAndLocks() throws { try super.testExtendedAttributesAndLocks() }
    override func testMoveAcrossContainers() throws { try super.testMoveAcrossContainers() }
}

/// ``PosixDetailsTests`` over Apache.
final class PosixDetailsTestsOverWebDAV: PosixDetailsTests {
    override class var remote: TestRemote { .apache }
    override func testNamesThatAreNotUTF8AreRefusedNotMerged() throws {
        try super.testNamesThatAreNotUTF8AreRefusedNotMerged()
    }
    override func testLongNamesAreTooLongForEveryOperation() throws {
        try super.testLongNamesAreTooLongForEveryOperation()
    }
    override func testTruncateOrWritePastTheLargestFileIsEFBIG() throws {
        try super.testTruncateOrWritePastTheLargestFileIsEFBIG()
    }
    override func testLinkCounts() throws { try super.testLinkCounts() }
    override func testAFoldersLinkCountFollowsSubfoldersMadeAndRemovedOnTheRemote() throws {
        try super.testAFoldersLinkCountFollowsSubfoldersMadeAndRemovedOnTheRemote()
    }
    override func testDeviceNodesAreLocalOnly() throws { try super.testDeviceNodesAreLocalOnly() }
}

/// ``EditorSaveMountTests`` over Apache.
final class EditorSaveMountTestsOverWebDAV: EditorSaveMountTests {
    override class var remote: TestRemote { .apache }
    override func testVimDefaultSaveKeepsTheDocument() throws { try super.testVimDefaultSaveKeepsTheDocument() }
    override func testVimRenamingSavesWithBackupKeepTheDocument() throws {
        try super.testVimRenamingSavesWithBackupKeepTheDocument()
    }
    override func testEmacsSavesKeepTheDocument() throws { try super.testEmacsSavesKeepTheDocument() }
    override func testGioSaveKeepsTheDocument() throws { try super.testGioSaveKeepsTheDocument() }
    override func testLibreOfficeSaveSequenceKeepsTheDocument() throws {
        try super.testLibreOfficeSaveSequenceKeepsTheDocument()
    }
    override func testLibreOfficeConvertOverTheDocumentKeepsIt() throws {
        try super.testLibreOfficeConvertOverTheDocumentKeepsIt()
    }
    override func testTheRenameOfASaveIsNotUploadedInBetween() throws {
        try super.testTheRenameOfASaveIsNotUploadedInBetween()
    }
    override func testACrashInTheMiddleOfASaveLosesNothing() throws {
        try super.testACrashInTheMiddleOfASaveLosesNothing()
    }
}

/// ``SparseFileTests`` over Apache.
final class SparseFileTestsOverWebDAV: SparseFileTests {
    override class var remote: TestRemote { .apache }
    override func testTruncatedFileStaysSparseInCacheOnTheRemoteAndInADownload() throws {
        try super.testTruncatedFileStaysSparseInCacheOnTheRemoteAndInADownload()
    }
    override func testDataAtBothEndsOfAHoleIsKeptThroughCopiesAndUploads() throws {
        try super.testDataAtBothEndsOfAHoleIsKeptThroughCopiesAndUploads()
    }
    override func testFallocateAllocatesKeepsTheSizeAndPunchesHoles() throws {
        try super.testFallocateAllocatesKeepsTheSizeAndPunchesHoles()
    }
    override func testSeekDataAndHoleSeeTheHolesAndCopiesStaySparse() throws {
        try super.testSeekDataAndHoleSeeTheHolesAndCopiesStaySparse()
    }
}

/// ``CoordinationTests`` over Apache.
final class CoordinationTestsOverWebDAV: CoordinationTests {
    override class var remote: TestRemote { .apache }
    override func testReadersSeeOnlyCommittedVersions() throws { try super.testReadersSeeOnlyCommittedVersions() }
    override func testOpenReaderKeepsItsSnapshot() throws { try super.testOpenReaderKeepsItsSnapshot() }
    override func testConcurrentAppendersLoseNothing() throws { try super.testConcurrentAppendersLoseNothing() }
    override func testSecondWriterWaitsThenBusy() throws { try super.testSecondWriterWaitsThenBusy() }
    override func testFsyncCommits() throws { try super.testFsyncCommits() }
}

/// ``DurabilityTests`` over Apache.
final class DurabilityTestsOverWebDAV: DurabilityTests {
    override class var remote: TestRemote { .apache }
    override func testKilledDaemonUploadsEverythingAfterRestart() throws {
        try super.testKilledDaemonUploadsEverythingAfterRestart()
    }
    override func testFsyncedDataSurvivesKillBeforeClose() throws { try super.testFsyncedDataSurvivesKillBeforeClose() }
    override func testFsyncOfFolderMakesNamesDurableBeforeKill() throws {
        try super.testFsyncOfFolderMakesNamesDurableBeforeKill()
    }
}

/// ``ConflictTests`` over Apache.
final class ConflictTestsOverWebDAV: ConflictTests {
    override class var remote: TestRemote { .apache }
    override func testConcurrentEditsKeepBothVersionsAndConvergeAfterResolve() throws {
        try super.testConcurrentEditsKeepBothVersionsAndConvergeAfterResolve()
    }
    override func testASaveByHandOnTheRemoteOfADocumentChangedHereIsAConflict() throws {
        try super.testASaveByHandOnTheRemoteOfADocumentChangedHereIsAConflict()
    }
    override func testASaveByHandOnTheRemoteWhileNoDaemonRanKeepsTheItem() throws {
        try super.testASaveByHandOnTheRemoteWhileNoDaemonRanKeepsTheItem()
    }
    override func testASaveByHandAfterAnotherDeviceChangedTheFileWhileThisOneWasStoppedKeepsTheItem() throws {
        try super.testASaveByHandAfterAnotherDeviceChangedTheFileWhileThisOneWasStoppedKeepsTheItem()
    }
    override func testKeepRemoteAndKeepLocal() throws { try super.testKeepRemoteAndKeepLocal() }
    override func testDeleteModifyRacesKeepTheChange() throws { try super.testDeleteModifyRacesKeepTheChange() }
}

/// ``PlaceholderTests`` over Apache.
final class PlaceholderTestsOverWebDAV: PlaceholderTests {
    override class var remote: TestRemote { .apache }
    override func testMetadataWithoutDownloading() throws { try super.testMetadataWithoutDownloading() }
    override func testSlowDownloadShowsProgressAndBlocksNothing() throws {
        try super.testSlowDownloadShowsProgressAndBlocksNothing()
    }
    override func testConcurrentOpensShareOneDownload() throws { try super.testConcurrentOpensShareOneDownload() }
    override func testFailedDownloadFailsOpenAndKeepsPlaceholder() throws {
        try super.testFailedDownloadFailsOpenAndKeepsPlaceholder()
    }
    override func testInterruptedOpenCancelsTheDownload() throws { try super.testInterruptedOpenCancelsTheDownload() }
    override func testInterruptingOneWaiterKeepsTheSharedDownload() throws {
        try super.testInterruptingOneWaiterKeepsTheSharedDownload()
    }
}

/// ``LargeContainerTests`` over Apache.
final class LargeContainerTestsOverWebDAV: LargeContainerTests {
    override class var remote: TestRemote { .apache }
    override func testListingTenThousandItemsDownloadsNothing() throws {
        try super.testListingTenThousandItemsDownloadsNothing()
    }
}

/// ``PlaceholderBlocksTests`` over Apache.
final class PlaceholderBlocksTestsOverWebDAV: PlaceholderBlocksTests {
    override class var remote: TestRemote { .apache }
    override func testPlaceholdersTakeNoBlocks() throws { try super.testPlaceholdersTakeNoBlocks() }
}

/// ``OnDemandContentTests`` over Apache.
final class OnDemandContentTestsOverWebDAV: OnDemandContentTests {
    override class var remote: TestRemote { .apache }
    override func testAPinnedFolderIsListedAllTheWayDownAndDownloaded() throws {
        try super.testAPinnedFolderIsListedAllTheWayDownAndDownloaded()
    }
    override func testDownloadOfAFolderListsWhatItHolds() throws { try super.testDownloadOfAFolderListsWhatItHolds() }
}

/// ``OnDemandListingTests`` over Apache.
final class OnDemandListingTestsOverWebDAV: OnDemandListingTests {
    override class var remote: TestRemote { .apache }
    override func testABigRemoteMountsAtOnceAndListsOneFolderOnly() throws {
        try super.testABigRemoteMountsAtOnceAndListsOneFolderOnly()
    }
    override func testAChangeDeepInTheTreeReachesTheMountAndInotify() throws {
        try super.testAChangeDeepInTheTreeReachesTheMountAndInotify()
    }
    override func testAnExpiredAnchorResyncsTheListedFoldersAndKeepsLocalChanges() throws {
        try super.testAnExpiredAnchorResyncsTheListedFoldersAndKeepsLocalChanges()
    }
    override func testAFileMovedByHandIntoAFolderBeingListedIsNeverLost() throws {
        try super.testAFileMovedByHandIntoAFolderBeingListedIsNeverLost()
    }
}

/// ``ContentManagementMountTests`` over Apache.
final class ContentManagementMountTestsOverWebDAV: ContentManagementMountTests {
    override class var remote: TestRemote { .apache }
    override func testDownloadEvictAndTheirRefusals() throws { try super.testDownloadEvictAndTheirRefusals() }
    override func testPinnedFolderIsDownloadedAndKeepsWhatIsAddedLater() throws {
        try super.testPinnedFolderIsDownloadedAndKeepsWhatIsAddedLater()
    }
    override func testCacheLimitEvictsLeastRecentlyUsedButNeverAnOpenFile() throws {
        try super.testCacheLimitEvictsLeastRecentlyUsedButNeverAnOpenFile()
    }
}

/// ``ViewTests`` over Apache.
final class ViewTestsOverWebDAV: ViewTests {
    override class var remote: TestRemote { .apache }
    override func testRemoteChangesFireInotifyEventsInTheAppView() throws {
        try super.testRemoteChangesFireInotifyEventsInTheAppView()
    }
    override func testAppViewOfAPrivateContainerSharesTheState() throws {
        try super.testAppViewOfAPrivateContainerSharesTheState()
    }
    override func testGrantedDocumentOpensInPlaceInTheAppView() throws {
        try super.testGrantedDocumentOpensInPlaceInTheAppView()
    }
    override func testChangesThroughOneViewAreSeenAtOnceThroughTheOther() throws {
        try super.testChangesThroughOneViewAreSeenAtOnceThroughTheOther()
    }
    override func testARenameThroughOneViewIsNeverStaleInTheOtherManyRounds() throws {
        try super.testARenameThroughOneViewIsNeverStaleInTheOtherManyRounds()
    }
    override func testVirtualFoldersShowTaggedAndRecentDocumentsInPlace() throws {
        try super.testVirtualFoldersShowTaggedAndRecentDocumentsInPlace()
    }
}

/// ``CLITests`` over Apache.
final class CLITestsOverWebDAV: CLITests {
    override class var remote: TestRemote { .apache }
    override func testDemoMountsTheSampleRemote() throws { try super.testDemoMountsTheSampleRemote() }
    override func testBackgroundMountStatusAndUnmount() throws { try super.testBackgroundMountStatusAndUnmount() }
    override func testClearErrors() throws { try super.testClearErrors() }
}

/// ``DiskFullTests`` over Apache.
final class DiskFullTestsOverWebDAV: DiskFullTests {
    override class var remote: TestRemote { .apache }
    override func testWritesFailWithENOSPCAndNothingCommittedIsLost() throws {
        try super.testWritesFailWithENOSPCAndNothingCommittedIsLost()
    }
}

/// ``RemoteEventsTests`` over Apache.
final class RemoteEventsTestsOverWebDAV: RemoteEventsTests {
    override class var remote: TestRemote { .apache }
    override func testChangesOnAnotherDeviceFireInotifyEventsOnTheMount() throws {
        try super.testChangesOnAnotherDeviceFireInotifyEventsOnTheMount()
    }
    override func testAWatcherOfOneFileSeesItsRemoteEditAndDelete() throws {
        try super.testAWatcherOfOneFileSeesItsRemoteEditAndDelete()
    }
    override func testEveryFileOfAFolderThatAppearedIsCreatedForItsWatcherWhileAReaderWalksIt() throws {
        try super.testEveryFileOfAFolderThatAppearedIsCreatedForItsWatcherWhileAReaderWalksIt()
    }
    override func testAFolderThatAppearedIsReplayedOnlyWhereAProgramWatches() throws {
        try super.testAFolderThatAppearedIsReplayedOnlyWhereAProgramWatches()
    }
    override func testTheHelperOutlivesAQuietSpellAndAKill() throws {
        try super.testTheHelperOutlivesAQuietSpellAndAKill()
    }
    override func testKillingTheDaemonWhileItReplaysLeavesNoProcessBehind() throws {
        try super.testKillingTheDaemonWhileItReplaysLeavesNoProcessBehind()
    }
}

/// ``PolledRemoteChangesTests`` over Apache.
final class PolledRemoteChangesTestsOverWebDAV: PolledRemoteChangesTests {
    override class var remote: TestRemote { .apache }
    override func testRemoteEditsArriveWithTheDefaultPoll() throws {
        try super.testRemoteEditsArriveWithTheDefaultPoll()
    }
}

/// ``TwoDeviceRaceTests`` over Apache.
final class TwoDeviceRaceTestsOverWebDAV: TwoDeviceRaceTests {
    override class var remote: TestRemote { .apache }
    override func testSimultaneousEditsOnTwoDevicesAlwaysKeepBothVersions() throws {
        try super.testSimultaneousEditsOnTwoDevicesAlwaysKeepBothVersions()
    }
}

/// ``CrashBatteryTests`` over Apache.
final class CrashBatteryTestsOverWebDAV: CrashBatteryTests {
    override class var remote: TestRemote { .apache }
    override func testRandomWorkloadWithKills() throws { try super.testRandomWorkloadWithKills() }
}

/// ``ThumbnailMountTests`` over Apache.
final class ThumbnailMountTestsOverWebDAV: ThumbnailMountTests {
    override class var remote: TestRemote { .apache }
    override func testADocumentWrittenHereIsTypedAndThumbnailedAndAnotherDeviceHasBothWithoutItsContent() throws {
        try super.testADocumentWrittenHereIsTypedAndThumbnailedAndAnotherDeviceHasBothWithoutItsContent()
    }
    override func testADeviceOnlineWhileADocumentIsWrittenElsewhereGetsItsThumbnail() throws {
        try super.testADeviceOnlineWhileADocumentIsWrittenElsewhereGetsItsThumbnail()
    }
    override func testTheCacheFollowsRenamesMovesNewVersionsAndDeletes() throws {
        try super.testTheCacheFollowsRenamesMovesNewVersionsAndDeletes()
    }
    override func testAThumbnailerThatFailsLeavesAFailureRecordSoNobodyDownloadsToTryAgain() throws {
        try super.testAThumbnailerThatFailsLeavesAFailureRecordSoNobodyDownloadsToTryAgain()
    }
    override func testGIOAndFileDecideTypesFromContentNotFromTheAttribute() throws {
        try super.testGIOAndFileDecideTypesFromContentNotFromTheAttribute()
    }
}

/// ``TagsTravelTests`` over Apache.
final class TagsTravelTestsOverWebDAV: TagsTravelTests {
    override class var remote: TestRemote { .apache }
    override func testTagsSetOnOneDeviceShowOnAnotherDevicesPlaceholders() throws {
        try super.testTagsSetOnOneDeviceShowOnAnotherDevicesPlaceholders()
    }
    override func testTagsSurviveEvictionAndRestart() throws { try super.testTagsSurviveEvictionAndRestart() }
    override func testAContentEditHereAndATagChangeThereAtOnceBothLand() throws {
        try super.testAContentEditHereAndATagChangeThereAtOnceBothLand()
    }
    override func testConcurrentTagsOnTwoDevicesEndWithTheUnion() throws {
        try super.testConcurrentTagsOnTwoDevicesEndWithTheUnion()
    }
    override func testTagCommandErrorsAreClearAndLoseNothing() throws {
        try super.testTagCommandErrorsAreClearAndLoseNothing()
    }
}

/// ``ContainerTests`` over Apache.
final class ContainerTestsOverWebDAV: ContainerTests {
    override class var remote: TestRemote { .apache }
    override func testContainersAreListedWithWhatThisMachineKnowsAndHas() throws {
        try super.testContainersAreListedWithWhatThisMachineKnowsAndHas()
    }
    override func testOfflineTheContainersKnownHereAreListedAndNoneIsMade() throws {
        try super.testOfflineTheContainersKnownHereAreListedAndNoneIsMade()
    }
    override func testAnAppsFirstMountMakesItsContainerWhichASecondDeviceSees() throws {
        try super.testAnAppsFirstMountMakesItsContainerWhichASecondDeviceSees()
    }
    override func testTwoDevicesMakingOneAppsContainerAtOnceMakeOne() throws {
        try super.testTwoDevicesMakingOneAppsContainerAtOnceMakeOne()
    }
    override func testAnAppViewDaemonOfItsOwnMakesTheContainerAtItsFirstMount() throws {
        try super.testAnAppViewDaemonOfItsOwnMakesTheContainerAtItsFirstMount()
    }
}

/// ``BookmarkTests`` over Apache.
final class BookmarkTestsOverWebDAV: BookmarkTests {
    override class var remote: TestRemote { .apache }
    override func testABookmarkFollowsRenamesMovesEvictionSavesAndRestarts() throws {
        try super.testABookmarkFollowsRenamesMovesEvictionSavesAndRestarts()
    }
    override func testABookmarkOfAReplacedDocumentIsStaleAndOfADeletedOneIsAnError() throws {
        try super.testABookmarkOfAReplacedDocumentIsStaleAndOfADeletedOneIsAnError()
    }
    override func testTheExampleProgramBookmarksAndResolvesThroughTheControlSocket() throws {
        try super.testTheExampleProgramBookmarksAndResolvesThroughTheControlSocket()
    }
    override func testABrokenBookmarkKeyStopsTheMountWithWhatToDo() throws {
        try super.testABrokenBookmarkKeyStopsTheMountWithWhatToDo()
    }
    override func testForgedChangedAndForeignBookmarksAreRefused() throws {
        try super.testForgedChangedAndForeignBookmarksAreRefused()
    }
    override func testAnAppViewResolvesOnlyWhatItMayOpenAndItsSocketRefusesTheUsersCommands() throws {
        try super.testAnAppViewResolvesOnlyWhatItMayOpenAndItsSocketRefusesTheUsersCommands()
    }
}

/// ``DocumentModeTests`` over Apache.
final class DocumentModeTestsOverWebDAV: DocumentModeTests {
    override class var remote: TestRemote { .apache }
    override func testImportCopiesADocumentIntoAnAppsContainerAsANewDocument() throws {
        try super.testImportCopiesADocumentIntoAnAppsContainerAsANewDocument()
    }
    override func testExportCopiesOutWithTagsToAnotherContainerOrAPlainFolder() throws {
        try super.testExportCopiesOutWithTagsToAnotherContainerOrAPlainFolder()
    }
    override func testMoveTakesADocumentToAnotherContainerAndLeavesAReference() throws {
        try super.testMoveTakesADocumentToAnotherContainerAndLeavesAReference()
    }
}
// END GENERATED
