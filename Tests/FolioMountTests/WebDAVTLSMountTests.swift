import Foundation
import XCTest

/// Issue 15: a mount of an `https://` server whose certificate the system does not trust, given with `--ca-file`;
/// without it the mount fails with a clear TLS error.
final class WebDAVTLSMountTests: WebDAVMountTestCase {
    override var serverUsesTLS: Bool { true }

    func testHTTPSWithTheServersCertificateAsCAFile() throws {
        let caFile = try XCTUnwrap(server.caFile)
        XCTAssertTrue(remoteURL.hasPrefix("https://"), remoteURL)
        let untrusting = try MountFixture(remote: remoteURL)
        addTeardownBlock { untrusting.tearDown() }
        let refused = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(remoteURL)' --state '\(untrusting.state)' "
                + "'\(untrusting.mountpoint)'",
            environment: untrusting.environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("--ca-file"), refused.stderr)
        XCTAssertFalse(untrusting.isMounted)

        let device = try mount(["--ca-file", caFile])
        Shell.check("echo 'over TLS' > '\(device.path("tls.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("tls.txt"), "over TLS\n")
        XCTAssertEqual(try server.request("GET", Self.collection + "com.folio.drive/tls.txt").text, "over TLS\n")
    }
}
