import Foundation
import XCTest

/// A test case with a fresh temporary directory for a store database (``databasePath``), removed afterwards.
class StoreTestCase: XCTestCase {
    /// The test's directory.
    var directory: URL!

    /// Where the test's store database lives (its folder is made by the store).
    var databasePath: String { directory.appendingPathComponent("meta/store.sqlite").path }

    override func setUpWithError() throws {
        directory = try StoreFixtures.makeTemporaryDirectory()
    }

    override func tearDownWithError() throws {
        if let directory { try FileManager.default.removeItem(at: directory) }
    }
}
