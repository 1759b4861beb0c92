import FolioCore
import Foundation
import XCTest

/// Runs `body`, which must throw a ``FolioError``, and returns it; fails the test (and returns `nil`) if it
/// returns or throws something else.
func folioError<T>(
    _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async -> FolioError? {
    do {
        let value = try await body()
        XCTFail("expected a FolioError, got \(value)", file: file, line: line)
    } catch let error as FolioError {
        return error
    } catch {
        XCTFail("expected a FolioError, got \(type(of: error)): \(error)", file: file, line: line)
    }
    return nil
}

/// What `body` returns, or `nil` (the body cancelled) if it has not returned within `limit`: a bound on a wait
/// that would otherwise never end if the code under test is wrong.
func within<T: Sendable>(
    _ limit: Duration, _ body: @escaping @Sendable () async -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
