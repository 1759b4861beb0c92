import CFUSE
import FolioCore
import Foundation

/// Answers to the requests of the mount's replay helper (see ``ChangeReplayer``): they follow the
/// ``ReplayScript`` and never change the core.
extension FUSEOperations {
    /// Answers a lookup of `name` in `parent` (core inode) if the script speaks of it; `false` otherwise (the
    /// lookup is answered as any other).
    static func answerReplayedLookup(
        _ reply: Reply, _ mount: FUSEMount, _ script: ReplayScript, parent: UInt64, name: String
    ) -> Bool {
        let key = ReplayScript.Name(parent: parent, name: name)
        if script.absent.contains(key) {
            reply.answer { fuse_reply_err($0, ENOENT) }
            return true
        }
        guard let attributes = script.present[key] else { return false }
        var entry = mount.entry(attributes)
        entry.entry_timeout = 0
        mount.fileSystem.rememberLookups([attributes.ino])
        reply.answer { fuse_reply_entry($0, &entry) }
        return true
    }

    /// Answers a create (`mknod`, `mkdir`, `symlink`) with the item the core already has under that name;
    /// a name the script does not create is refused (the replay helper never creates anything).
    static func answerReplayedCreate(
        _ reply: Reply, _ mount: FUSEMount, _ script: ReplayScript, parent: UInt64, name: String
    ) {
        guard script.absent.contains(.init(parent: parent, name: name)) else {
            reply.answer { fuse_reply_err($0, EPERM) }
            return
        }
        replyEntry(reply, mount) { try mount.fileSystem.lookup(parent: parent, name: name) }
    }

    /// Answers a removal or a move away of `name` in `parent`: done, if the script has the name there; refused
    /// otherwise (the replay helper never deletes anything).
    static func answerReplayedRemoval(_ reply: Reply, _ script: ReplayScript, parent: UInt64, name: String) {
        let known = script.present[.init(parent: parent, name: name)] != nil
        reply.answer { fuse_reply_err($0, known ? 0 : EPERM) }
    }

    /// Answers an attribute change with the attributes as they are (the replay fires ATTRIB, nothing changes).
    static func answerReplayedAttributeChange(_ reply: Reply, _ mount: FUSEMount, ino: UInt64) {
        do {
            var value = try mount.fileSystem.getAttributes(ino).statValue
            reply.answer { fuse_reply_attr($0, &value, 0) }
        } catch {
            reply.fail(error)
        }
    }

    /// Answers an open with the replay handle: nothing is opened in the core, nothing downloaded.
    static func answerReplayedOpen(_ reply: Reply, _ fileInfo: UnsafeMutablePointer<fuse_file_info>) {
        var info = fileInfo.pointee
        info.fh = ReplayScript.handle
        info.keep_cache = 0
        info.direct_io = 1
        reply.answer { _ = fuse_reply_open($0, &info) }
    }
}
