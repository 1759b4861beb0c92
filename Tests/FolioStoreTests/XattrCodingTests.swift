import FolioCore
import XCTest

@testable import FolioStore

final class XattrCodingTests: XCTestCase {
    func testEmptyAttributesAreStoredAsNull() throws {
        XCTAssertNil(XattrCoding.encode([:]))
        XCTAssertEqual(try XattrCoding.decode(nil), [:])
    }

    func testBinaryValuesRoundTrip() throws {
        let xattrs: [String: [UInt8]] = [
            "user.a": [], "user.zeros": [0, 0, 0], "user.all": (0...255).map { UInt8($0) }, "user.✓": [0xFF],
        ]
        XCTAssertEqual(try XattrCoding.decode(XattrCoding.encode(xattrs)), xattrs)
    }

    func testEncodingIsDeterministic() {
        let xattrs: [String: [UInt8]] = Dictionary(uniqueKeysWithValues: (0..<50).map { ("user.\($0)", [UInt8($0)]) })
        XCTAssertEqual(XattrCoding.encode(xattrs), XattrCoding.encode(Dictionary(uniqueKeysWithValues: Array(xattrs))))
    }

    func testMalformedBlobsThrow() throws {
        let valid = try XCTUnwrap(XattrCoding.encode(["user.name": [1, 2, 3]]))
        XCTAssertThrowsError(try XattrCoding.decode([2] + valid.dropFirst()), "unknown format")
        for length in 2..<valid.count {
            XCTAssertThrowsError(try XattrCoding.decode(Array(valid.prefix(length))), "truncated to \(length) bytes")
        }
        XCTAssertThrowsError(try XattrCoding.decode([1, 0xFF, 0xFF, 0xFF, 0xFF]), "length beyond the end")
    }
}
