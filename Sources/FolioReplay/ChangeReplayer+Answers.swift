import FolioCore
import FolioFUSE
import SystemPackage

/// The replay in front of the mount's handlers: the helper's requests are answered from the ``ReplayScript``,
/// never by the core.
extension ChangeReplayer {
    public func answer(_ request: FUSERequest, from caller: FUSECaller, reply: Reply) -> Bool {
        switch request {
        case .getAttributes(let ino, .some(ReplayScript.handle)):
            // Through a replay's open: the item as it is (the handle is no core handle).
            reply.attributes { try fileSystem.getAttributes(ino) }
            return true
        case .flush(ReplayScript.handle), .release(ReplayScript.handle):
            reply.succeed()
            return true
        case .lookup, .makeNode, .makeDirectory, .makeSymlink, .unlink, .removeDirectory, .rename, .setAttributes,
             .open, .link, .create:
            break  // what the helper's system calls send: is the caller the helper?
        default:
            return false  // reads, writes, listings…: the helper sends none (and they take no lock here)
        }
        guard let script = script(forProcess: caller.threadID) else { return false }
        switch request {
        case .lookup(let name):
            return answerLookup(name, script, reply)
        case .makeNode(let request):
            answerCreate(request.at, script, reply)
        case .makeDirectory(let request):
            answerCreate(request.at, script, reply)
        case .makeSymlink(let at, _):
            answerCreate(at, script, reply)
        case .unlink(let name), .removeDirectory(let name):
            answerRemoval(name, script, reply)
        case .rename(let request):
            answerRemoval(request.from, script, reply)
        case .setAttributes(let request):
            // The replay fires ATTRIB or MODIFY; nothing changes.
            reply.attributes(cached: false) { try fileSystem.getAttributes(request.ino) }
        case .open(let request):
            // Nothing is opened in the core, nothing downloaded.
            reply.opened(OpenedFile(handle: ReplayScript.handle, cachePolicy: .directIO), info: request.info)
        case .link, .create:
            reply.refuse(.notPermitted)
        default:
            return false
        }
        return true
    }

    /// Answers a lookup of `name` if the script speaks of it; `false` otherwise (the lookup is answered as any
    /// other). A name the change makes is not there yet; one it removes is still there, and not kept by the kernel.
    private func answerLookup(_ name: ReplayScript.Name, _ script: ReplayScript, _ reply: Reply) -> Bool {
        if script.absent.contains(name) {
            reply.refuse(.noSuchFileOrDirectory)
            return true
        }
        guard let attributes = script.present[name] else { return false }
        fileSystem.rememberLookups([attributes.ino])
        reply.entry(attributes, cachingName: false)
        return true
    }

    /// Answers a create (`mknod`, `mkdir`, `symlink`) with the item the core already has under that name; a name
    /// the script does not create is refused (the replay helper never creates anything).
    private func answerCreate(_ name: ReplayScript.Name, _ script: ReplayScript, _ reply: Reply) {
        guard script.absent.contains(name) else {
            reply.refuse(.notPermitted)
            return
        }
        reply.entry { try fileSystem.lookup(parent: name.parent, name: name.name) }
    }

    /// Answers a removal or a move away of `name`: done, if the script has the name there; refused otherwise (the
    /// replay helper never deletes anything).
    private func answerRemoval(_ name: ReplayScript.Name, _ script: ReplayScript, _ reply: Reply) {
        if script.present[name] != nil {
            reply.succeed()
        } else {
            reply.refuse(.notPermitted)
        }
    }
}
