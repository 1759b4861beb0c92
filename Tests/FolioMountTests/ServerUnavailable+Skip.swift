import FolioTestServers
import XCTest

/// Starts a test server with `start`, skipping the test (`XCTSkip`) where this machine cannot run it
/// (``ServerUnavailable``: a program it needs is not installed).
func startOrSkip<Server>(_ start: () throws -> Server) throws -> Server {
    do {
        return try start()
    } catch let unavailable as ServerUnavailable {
        throw XCTSkip(unavailable.reason)
    }
}
