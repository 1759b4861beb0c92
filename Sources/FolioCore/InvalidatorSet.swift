/// Every mount's invalidator: one state can be mounted several times (one mount per view), and a change
/// must reach the kernel caches of all of them.
struct InvalidatorSet: KernelCacheInvalidator {
    let members: [any KernelCacheInvalidator]

    func invalidateInode(_ ino: UInt64) {
        for member in members { member.invalidateInode(ino) }
    }

    func invalidateEntry(parent: UInt64, name: String) {
        for member in members { member.invalidateEntry(parent: parent, name: name) }
    }

    func replay(_ changes: [ReplayedChange]) {
        for member in members { member.replay(changes) }
    }
}
