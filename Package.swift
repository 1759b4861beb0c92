// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "folio", targets: ["folio"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CFUSE",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "CGIO",
            pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .target(
            name: "FolioCore",
            dependencies: [
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Collections", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioStore",
            dependencies: [
                "FolioCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioSync",
            dependencies: [
                "FolioCore", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioProviderLocal",
            dependencies: ["FolioCore", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .target(
            name: "FolioProviderWebDAV",
            dependencies: [
                "FolioCore",
                "CLibXML2",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // The libfuse adapter: the C table, typed requests, one handler per operation, and one hook (FUSEFront) for
        // what stands in front of the handlers.
        .target(
            name: "FolioFUSE",
            dependencies: [
                "FolioCore", "CFUSE", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        // The inotify replay of remote changes through a mount: FolioFUSE's front, answering its helper's requests.
        .target(
            name: "FolioReplay",
            dependencies: [
                "FolioCore", "FolioFUSE", "CFUSE", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioDesktop",
            dependencies: [
                "FolioCore", "CGIO", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioDaemon",
            dependencies: [
                "FolioCore", "FolioStore", "FolioSync", "FolioProviderLocal", "FolioProviderWebDAV", "FolioFUSE",
                "FolioReplay", "FolioDesktop", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "folio",
            dependencies: [
                "FolioDaemon", "FolioCore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolioTesting",
            dependencies: ["FolioCore", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        // Real servers the tests start on loopback (Apache, with curl to check what it holds), shared by the
        // provider tests and the mount tests. Not XCTest: a server this machine cannot run throws
        // ServerUnavailable, which each test target turns into a skip.
        .target(name: "FolioTestServers", swiftSettings: strict),
        .testTarget(
            name: "FolioCoreTests",
            dependencies: [
                "FolioCore", "FolioTesting", "FolioStore", "FolioSync", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "FolioStoreTests",
            dependencies: ["FolioStore", "FolioCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "FolioDesktopTests", dependencies: ["FolioDesktop", "FolioCore"]),
        .testTarget(
            name: "FolioProviderLocalTests",
            dependencies: [
                "FolioProviderLocal", "FolioCore", "FolioTesting",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "FolioProviderWebDAVTests",
            dependencies: [
                "FolioProviderWebDAV", "FolioCore", "FolioTesting", "FolioTestServers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "FolioMountTests",
            dependencies: [
                "FolioCore", "FolioProviderLocal", "FolioTesting", "FolioTestServers",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ]
)
