/// The kind of remote a mount test's daemon keeps its documents on (``MountTestCase/remote``).
enum TestRemote: Sendable {
    /// A folder kept by the local provider (the default).
    case local
    /// A private Apache `mod_dav` server on loopback (``ApacheServer``), its collection
    /// ``MountFixture/serverCollection`` as the remote (`--remote http://127.0.0.1:PORT/folio/`).
    case apache
}
