import XCTest

// Issue 15: the mount test battery over a WebDAV server. Each class below runs every test of an existing class over
// a private Apache `mod_dav` (``MountTestCase/remote``, ``MountFixture``) instead of the local provider; a test whose
// remote setup only the local provider has skips itself there (``MountTestCase/skipOverWebDAV(_:)``). Left out:
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

/// ``ShellToolTests`` over Apache.
final class ShellToolTestsOverWebDAV: ShellToolTests {
    override class var remote: TestRemote { .apache }
}

/// ``PosixTests`` over Apache.
final class PosixTestsOverWebDAV: PosixTests {
    override class var remote: TestRemote { .apache }
}

/// ``PosixDetailsTests`` over Apache.
final class PosixDetailsTestsOverWebDAV: PosixDetailsTests {
    override class var remote: TestRemote { .apache }
}

/// ``EditorSaveMountTests`` over Apache.
final class EditorSaveMountTestsOverWebDAV: EditorSaveMountTests {
    override class var remote: TestRemote { .apache }
}

/// ``SparseFileTests`` over Apache.
final class SparseFileTestsOverWebDAV: SparseFileTests {
    override class var remote: TestRemote { .apache }
}

/// ``CoordinationTests`` over Apache.
final class CoordinationTestsOverWebDAV: CoordinationTests {
    override class var remote: TestRemote { .apache }
}

/// ``DurabilityTests`` over Apache.
final class DurabilityTestsOverWebDAV: DurabilityTests {
    override class var remote: TestRemote { .apache }
}

/// ``ConflictTests`` over Apache.
final class ConflictTestsOverWebDAV: ConflictTests {
    override class var remote: TestRemote { .apache }
}

/// ``TwoDeviceRaceTests`` over Apache.
final class TwoDeviceRaceTestsOverWebDAV: TwoDeviceRaceTests {
    override class var remote: TestRemote { .apache }
}

/// ``PlaceholderTests`` over Apache.
final class PlaceholderTestsOverWebDAV: PlaceholderTests {
    override class var remote: TestRemote { .apache }
}

/// ``LargeContainerTests`` over Apache.
final class LargeContainerTestsOverWebDAV: LargeContainerTests {
    override class var remote: TestRemote { .apache }
}

/// ``PlaceholderBlocksTests`` over Apache.
final class PlaceholderBlocksTestsOverWebDAV: PlaceholderBlocksTests {
    override class var remote: TestRemote { .apache }
}

/// ``OnDemandContentTests`` over Apache.
final class OnDemandContentTestsOverWebDAV: OnDemandContentTests {
    override class var remote: TestRemote { .apache }
}

/// ``OnDemandListingTests`` over Apache.
final class OnDemandListingTestsOverWebDAV: OnDemandListingTests {
    override class var remote: TestRemote { .apache }
}

/// ``ContentManagementMountTests`` over Apache.
final class ContentManagementMountTestsOverWebDAV: ContentManagementMountTests {
    override class var remote: TestRemote { .apache }
}

/// ``ViewTests`` over Apache.
final class ViewTestsOverWebDAV: ViewTests {
    override class var remote: TestRemote { .apache }
}

/// ``CLITests`` over Apache.
final class CLITestsOverWebDAV: CLITests {
    override class var remote: TestRemote { .apache }
}

/// ``CrashBatteryTests`` over Apache.
final class CrashBatteryTestsOverWebDAV: CrashBatteryTests {
    override class var remote: TestRemote { .apache }
}

/// ``DiskFullTests`` over Apache.
final class DiskFullTestsOverWebDAV: DiskFullTests {
    override class var remote: TestRemote { .apache }
}

/// ``RemoteEventsTests`` over Apache.
final class RemoteEventsTestsOverWebDAV: RemoteEventsTests {
    override class var remote: TestRemote { .apache }
}

/// ``PolledRemoteChangesTests`` over Apache.
final class PolledRemoteChangesTestsOverWebDAV: PolledRemoteChangesTests {
    override class var remote: TestRemote { .apache }
}
