import Foundation
import XCTest

/// Ordinary programs on the mount: the tree must behave like a local folder, and reach the remote.
class ShellToolTests: MountTestCase {
    func testCatCopyMoveRemove() throws {
        let m = fixture.mountpoint
        Shell.check("""
            set -e
            cd '\(m)'
            printf 'hello\\n' > a.txt
            test "$(cat a.txt)" = hello
            mkdir -p src/deep/er && for i in 1 2 3; do echo "file $i" > src/deep/er/f$i; done
            cp -r src copy
            diff -r src copy
            mv copy moved
            test ! -e copy && test -f moved/deep/er/f2
            mv a.txt moved/deep/
            test "$(cat moved/deep/a.txt)" = hello
            rm -r moved
            test ! -e moved
            """)
        fixture.waitForUploads()
        // (`.DAV`: where a WebDAV server keeps its properties, beside the files.)
        Shell.check("diff -r --exclude=.DAV '\(m)/src' '\(fixture.remotePath("src"))'")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath("moved")))
    }

    func testSedInPlaceAndEditorSaveKeepIdentity() throws {
        let file = fixture.path("doc.txt")
        Shell.check("printf 'one\\ntwo\\n' > '\(file)'")
        fixture.waitForUploads()
        let id = Shell.check("getfattr --only-values -n user.folio.id '\(file)'")
        Shell.check("setfattr -n user.xdg.tags -v blue '\(file)'")
        Shell.check("sed -i 's/two/TWO/' '\(file)'")
        XCTAssertEqual(Shell.check("cat '\(file)'"), "one\nTWO\n")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(file)'"), id, "sed -i must keep the item")
        // An editor's atomic save: write a temp file, then rename it over the document.
        Shell.check("cd '\(fixture.mountpoint)' && printf 'three\\n' > .doc.txt.swp && mv .doc.txt.swp doc.txt")
        XCTAssertEqual(Shell.check("cat '\(file)'"), "three\n")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(file)'"), id, "atomic save keeps the item")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(file)'"), "blue", "tags survive the save")
        fixture.waitForUploads()
        XCTAssertEqual(try String(contentsOfFile: fixture.remotePath("doc.txt"), encoding: .utf8), "three\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath(".doc.txt.swp")))
        XCTAssertEqual(fixture.remoteItemID("doc.txt"), id, "the remote item keeps its id through the save")
    }

    func testTarExtractMatchesOriginal() throws {
        let source = fixture.root + "/tree"
        Shell.check("""
            set -e
            mkdir -p '\(source)'
            cd '\(source)'
            for d in a b c/d c/e; do mkdir -p $d; for i in $(seq 1 20); do head -c $((i * 997)) /dev/urandom > $d/file$i.bin; done; done
            ln -s a/file1.bin link
            chmod 600 a/file3.bin
            cd .. && tar cf tree.tar tree
            """)
        Shell.check("cd '\(fixture.mountpoint)' && tar xf '\(fixture.root)/tree.tar'")
        Shell.check("diff -r --no-dereference '\(source)' '\(fixture.path("tree"))'")
        XCTAssertEqual(Shell.check("stat -c %a '\(fixture.path("tree/a/file3.bin"))'"), "600\n")
        fixture.waitForUploads()
        guard Self.remote == .apache else {
            Shell.check("diff -r --no-dereference '\(source)' '\(fixture.remotePath("tree"))'")
            return
        }
        // A WebDAV server keeps a symbolic link as a file with Folio's `symlink` property naming its target.
        Shell.check(
            "diff -r --no-dereference --exclude=.DAV --exclude=link '\(source)' '\(fixture.remotePath("tree"))'")
        XCTAssertEqual(fixture.serverProperty("symlink", of: "tree/link"), "a/file1.bin")
    }

    func testGitWorkflow() throws {
        Shell.check("""
            set -e
            cd '\(fixture.mountpoint)'
            git init -q repo && cd repo
            git config user.email t@example.com && git config user.name Tester
            for i in $(seq 1 30); do echo "line $i" > f$i.txt; done
            git add . && git commit -qm first
            echo changed >> f3.txt
            git status --porcelain | grep -q 'M f3.txt'
            git commit -qam second
            test -z "$(git status --porcelain)"
            git log --oneline | wc -l | grep -q 2
            git fsck --no-progress
            """)
    }

    func testPythonWrites() throws {
        let script = """
            import os
            p = os.path.join('\(fixture.mountpoint)', 'py')
            os.makedirs(p, exist_ok=True)
            with open(os.path.join(p, 'data.bin'), 'wb') as f:
                for i in range(256):
                    f.write(bytes([i]) * 4096)
                f.flush(); os.fsync(f.fileno())
            with open(os.path.join(p, 'data.bin'), 'r+b') as f:
                f.seek(4096 * 10); f.write(b'X' * 10)
            with open(os.path.join(p, 'data.bin'), 'ab') as f:
                f.write(b'tail')
            data = open(os.path.join(p, 'data.bin'), 'rb').read()
            assert len(data) == 256 * 4096 + 4, len(data)
            assert data[4096 * 10:4096 * 10 + 10] == b'X' * 10
            assert data[-4:] == b'tail'
            os.truncate(os.path.join(p, 'data.bin'), 100)
            assert os.path.getsize(os.path.join(p, 'data.bin')) == 100
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - <<'EOF'\n\(script)\nEOF"), "ok\n")
        fixture.waitForUploads()
        let remote = try Data(contentsOf: URL(fileURLWithPath: fixture.remotePath("py/data.bin")))
        XCTAssertEqual(remote.count, 100)
    }
}
